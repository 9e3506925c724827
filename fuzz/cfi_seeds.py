#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# cfi_seeds.py ELF OUTDIR [N] - seeds for fuzz_cfi from a real .eh_frame:
# the N FDEs with the longest CFA programs, each beside its CIE in an input
# of fuzz/cfi.c's layout (pc offset, FDE offset, CIE then FDE).  The FDE's
# initial location is rewritten to 0 (pc-relative: the field itself) and the
# pc put mid-function, so the whole program up to it runs.
import os, struct, subprocess, sys, tempfile

def uleb(b, i):
    v = s = 0
    while True:
        x = b[i]; i += 1
        v |= (x & 0x7f) << s; s += 7
        if not x & 0x80:
            return v, i

def records(sec):
    i = 0
    while i + 4 <= len(sec):
        n, = struct.unpack_from('<I', sec, i)
        if n in (0, 0xffffffff):
            return
        yield i, sec[i:i + 4 + n]
        i += 4 + n

def cie_enc(cie):
    """The FDE pointer encoding of a 'z' CIE, or None."""
    i = 9
    end = cie.index(b'\0', i)
    aug = cie[i:end].decode()
    i = end + 1
    if not aug.startswith('z'):
        return None
    _, i = uleb(cie, i)                 # code alignment
    _, i = uleb(cie, i)                 # data alignment (as unsigned: skipped only)
    i += 1 if cie[8] == 1 else uleb(cie, i)[1] - i
    _, i = uleb(cie, i)                 # augmentation length
    enc = 0
    for c in aug[1:]:
        if c == 'R':
            enc = cie[i]; i += 1
        elif c == 'L':
            i += 1
        elif c == 'P':
            pe = cie[i]; i += 1
            i += {0x03: 4, 0x0b: 4, 0x1b: 4, 0x9b: 4, 0x00: 8, 0x04: 8}.get(pe & 0x7f, 0)
    return enc

def main():
    elf, out = sys.argv[1], sys.argv[2]
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    with tempfile.NamedTemporaryFile() as t:
        subprocess.run(['objcopy', '-O', 'binary', '--only-section=.eh_frame', elf, t.name],
                       check=True)
        sec = open(t.name, 'rb').read()
    cies, fdes = {}, []
    for off, rec in records(sec):
        cid, = struct.unpack_from('<I', rec, 4)
        if cid == 0:
            cies[off] = rec
        else:
            fdes.append((off, rec, off + 4 - cid))
    picked = []
    for off, rec, cie_off in fdes:
        cie = cies.get(cie_off)
        if cie is None or cie_enc(cie) != 0x1b:
            continue
        rng, = struct.unpack_from('<I', rec, 12)
        picked.append((len(rec), cie, rec, rng))
    picked.sort(key=lambda p: -p[0])
    os.makedirs(out, exist_ok=True)
    name = os.path.basename(elf)
    for k, (_, cie, rec, rng) in enumerate(picked[:count]):
        fde = bytearray(rec)
        struct.pack_into('<I', fde, 4, len(cie) + 4)   # CIE pointer: back to offset 0
        struct.pack_into('<i', fde, 8, 0)              # initial location: the field itself
        data = struct.pack('<iH', rng // 2, len(cie)) + cie + bytes(fde)
        open(os.path.join(out, f'{name}-fde{k}'), 'wb').write(data)

main()
