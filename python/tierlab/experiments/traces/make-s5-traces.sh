#!/bin/sh
# Remakes the memory traces `tierlab reproduce s5` pages (docs/reproduce-s5.md,
# "Paging", rules P3 and P4): Debian programs that stand in for S5's five
# desktop programs, run under Valgrind lackey with their data references
# filtered through Cachegrind's default caches (`tierlab capture memory
# --cache`: D1 64 KiB 2-way, LL 256 KiB 8-way, 64-byte lines; the trace is
# the last level's misses), cut to S5 Table 1's reference count: the
# program's first N misses (s5_window.py --prefix 1, rule P4 as amended),
# and compressed with zstd. Inputs are generated here, seeded.
#
#   sh make-s5-traces.sh               # all five
#   sh make-s5-traces.sh djpeg flac    # some
#
# Needs: valgrind zstd python3 (with numpy) tierlab, and the programs:
#   sudo apt-get install valgrind zstd freecell-solver-bin vim \
#       libjpeg-turbo-progs poppler-utils flac
# (the Makefile's `make deps` installs them). Writes beside this script
# (or to $S5_TRACES_OUT),
# with NAME.window.json (the windows read and the one chosen) beside each
# trace. The program is stopped once N misses are written (or runs to
# its end if it makes fewer).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${S5_TRACES_OUT:-$here}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

python3 - <<'PY'
import math, random, struct, wave
# A 2048x1280 picture (gradients plus seeded noise) for djpeg: 7.5 MiB of
# RGB, above gqview's 7.26 MiB.
rnd = random.Random(5)
w, h = 2048, 1280
noise = bytes(rnd.randrange(40) for _ in range(4096))
rows = []
for y in range(h):
    row = bytearray(3 * w)
    for x in range(w):
        n = noise[(x * 7 + y * 13) % 4096]
        row[3 * x] = min(255, x * 255 // w + n)
        row[3 * x + 1] = min(255, y * 255 // h + n)
        row[3 * x + 2] = min(255, (x + y) % 256 + n // 2)
    rows.append(bytes(row))
open("img.ppm", "wb").write(b"P6\n%d %d\n255\n" % (w, h) + b"".join(rows))
# Ten seconds of 44.1 kHz stereo (a 440 Hz tone plus seeded noise) for flac.
rnd = random.Random(5)
sr = 44100
f = wave.open("tone.wav", "wb")
f.setnchannels(2); f.setsampwidth(2); f.setframerate(sr)
frames = bytearray()
for i in range(10 * sr):
    s = 0.3 * math.sin(2 * math.pi * 440 * i / sr) + 0.05 * rnd.gauss(0, 1)
    v = max(-32768, min(32767, int(s * 32000)))
    frames += struct.pack("<hh", v, v)
f.writeframes(bytes(frames)); f.close()
# 16 MiB of text for vim, above gedit's 14.12 MiB.
rnd = random.Random(5)
words = ("the quick brown fox jumps over lazy dog memory page size translation "
         "buffer storage class").split()
lines = []
size = 0
while size < 16 << 20:
    line = " ".join(rnd.choice(words) for _ in range(12))
    lines.append(line)
    size += len(line) + 1
open("doc.txt", "w").write("\n".join(lines) + "\n")
# A one-page PDF of filled shapes (no text: no font is loaded) for
# pdftoppm; at 260 dpi its letter-size raster is 18.1 MiB of RGB, above
# kghostview's 16.98 MiB.
rnd = random.Random(5)
ops = []
for _ in range(400):
    x, y = rnd.uniform(0, 612), rnd.uniform(0, 792)
    ops.append("%.3f %.3f %.3f rg %.1f %.1f %.1f %.1f re f" % (
        rnd.random(), rnd.random(), rnd.random(), x, y, rnd.uniform(5, 120), rnd.uniform(5, 120)))
    ops.append("%.1f %.1f m %.1f %.1f %.1f %.1f %.1f %.1f c S" % tuple(
        rnd.uniform(0, 700) for _ in range(8)))
content = "\n".join(ops).encode()
objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"]
pdf = bytearray(b"%PDF-1.4\n")
offsets = []
for i, o in enumerate(objs, 1):
    offsets.append(len(pdf))
    pdf += b"%d 0 obj\n" % i + o + b"\nendobj\n"
xref = len(pdf)
pdf += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
pdf += b"".join(b"%010d 00000 n \n" % off for off in offsets)
pdf += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
open("shapes.pdf", "wb").write(bytes(pdf))
PY
cjpeg -quality 85 img.ppm > img.jpg
flac -s -f tone.wav -o tone.flac
make-microsoft-freecell-board -t 37 > deal37.txt

# capture NAME REFS PAGES CMD...: S5 Table 1's row (references; footprint
# in 4 KiB pages, its MB read as MiB).
capture() {
    name=$1 refs=$2 pages=$3
    shift 3
    tierlab capture memory --cache 65536,2,64 --cache 262144,8,64 \
        --max-requests "$refs" -o "$work/$name.memtrace" -- "$@" > /dev/null
    python3 "$here/s5_window.py" "$work/$name.memtrace" --refs "$refs" --pages "$pages" \
        --prefix 1 -o "$work/$name.window.memtrace" > "$out/$name.window.json"
    zstd -q -19 -f "$work/$name.window.memtrace" -o "$out/$name.memtrace.zst"
}

all="fc-solve vim djpeg pdftoppm flac"
[ $# -gt 0 ] && all="$*"
for name in $all; do
    case $name in
    fc-solve) capture fc-solve 490175 2519 fc-solve deal37.txt ;;
    vim) capture vim 1733763 3615 vim -u NONE -i NONE -n -es \
        -c '%s/fox/cat/g' -c 'w! edited.txt' -c 'q!' doc.txt ;;
    djpeg) capture djpeg 610685 1859 djpeg -bmp -outfile img.bmp img.jpg ;;
    pdftoppm) capture pdftoppm 1546135 4347 pdftoppm -r 260 -singlefile shapes.pdf page ;;
    flac) capture flac 1168939 2012 flac -s -d -c tone.flac ;;
    *) echo "unknown trace $name (fc-solve vim djpeg pdftoppm flac)" >&2; exit 2 ;;
    esac
done
ls -l "$out"/*.memtrace.zst
