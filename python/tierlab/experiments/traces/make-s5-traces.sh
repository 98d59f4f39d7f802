#!/bin/sh
# Remakes the memory traces `tierlab reproduce s5` pages (docs/reproduce-s5.md,
# "Paging"): Debian programs that stand in for S5's desktop programs, run
# under Valgrind lackey by `tierlab capture memory` (data references only),
# converted to memtrace and compressed with zstd. Inputs are generated here,
# seeded, so the captures repeat up to the programs' own address-space layout
# (ASLR moves the addresses, not the pattern).
#
# Needs: valgrind freecell-solver-bin libjpeg-turbo-progs flac sed zstd python3
#   sudo apt-get install valgrind freecell-solver-bin libjpeg-turbo-progs flac zstd
# Run from anywhere; writes beside this script. About a minute of CPU.
set -eu
out=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

python3 - <<'PY'
import random, wave, struct, math
# A 320x240 picture (gradients plus seeded noise) for djpeg.
rnd = random.Random(5)
w, h = 320, 240
px = bytearray()
for y in range(h):
    for x in range(w):
        for c in (x * 255 // w, y * 255 // h, (x + y) % 256):
            px.append(min(255, c + rnd.randrange(40)))
open("img.ppm", "wb").write(b"P6\n%d %d\n255\n" % (w, h) + bytes(px))
# One second of 44.1 kHz stereo: a 440 Hz tone plus seeded noise, for flac.
rnd = random.Random(5)
sr = 44100
f = wave.open("tone.wav", "wb")
f.setnchannels(2); f.setsampwidth(2); f.setframerate(sr)
frames = bytearray()
for i in range(sr):
    s = 0.3 * math.sin(2 * math.pi * 440 * i / sr) + 0.05 * rnd.gauss(0, 1)
    v = max(-32768, min(32767, int(s * 32000)))
    frames += struct.pack("<hh", v, v)
f.writeframes(bytes(frames)); f.close()
# 600 lines of text for sed.
rnd = random.Random(5)
words = "the quick brown fox jumps over lazy dog memory page size translation buffer storage class".split()
open("doc.txt", "w").write("\n".join(" ".join(rnd.choice(words) for _ in range(12)) for _ in range(600)))
PY
cjpeg -quality 85 img.ppm > img.jpg
flac -s -f tone.wav -o tone.flac
make-microsoft-freecell-board -t 24 > deal24.txt

capture() {
    name=$1; shift
    tierlab capture memory -o "$work/$name.lackey" -- "$@" > /dev/null
    tierlab trace convert "$work/$name.lackey" "$work/$name.memtrace"
    zstd -q -19 -f "$work/$name.memtrace" -o "$out/$name.memtrace.zst"
}
capture fc-solve fc-solve deal24.txt
capture sed sed -e s/fox/cat/g -e /lazy/d doc.txt
capture djpeg djpeg -outfile /dev/null img.jpg
capture flac flac -s -d -c tone.flac
ls -l "$out"/*.memtrace.zst
