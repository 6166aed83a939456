#!/usr/bin/env python3
"""Writes bcryptprimitives.dll: a code-less x64 DLL whose only export, ProcessPrng, is a forwarder
to advapi32.SystemFunction036 (RtlGenRandom). Wine 8 has no bcryptprimitives.dll, and ffi-rs's
Windows binary (Rust std) imports ProcessPrng from it, so node.exe fails to load ffi-rs without it.
Both functions take (buffer, length) and fill the buffer with random bytes; Rust ignores the result.

Usage: make-prng-forwarder.py OUT.dll

Layout (1 KiB file): headers in the first 0x200 bytes, one section '.edata' at RVA 0x1000 / file
offset 0x200 that holds the export directory. An export address entry whose RVA points inside the
export directory's own range is a forwarder string ("DLL.Function"), resolved by the loader.
"""
import struct
import sys

DLL_NAME = b"bcryptprimitives.dll\0"
EXPORT = b"ProcessPrng\0"
TARGET = b"advapi32.SystemFunction036\0"

SECT_RVA, SECT_RAW, ALIGN_FILE, ALIGN_SECT = 0x1000, 0x200, 0x200, 0x1000


def export_section() -> bytes:
    # Export directory (40 bytes), then its three tables (1 entry each), then the strings.
    eat = SECT_RVA + 40                 # AddressOfFunctions: 1 x u32
    enpt = eat + 4                      # AddressOfNames: 1 x u32
    eot = enpt + 4                      # AddressOfNameOrdinals: 1 x u16
    name_rva = eot + 2
    export_rva = name_rva + len(DLL_NAME)
    target_rva = export_rva + len(EXPORT)
    directory = struct.pack("<IIHHIIIIIII", 0, 0, 0, 0, name_rva, 1, 1, 1, eat, enpt, eot)
    tables = struct.pack("<IIH", target_rva, export_rva, 0)
    return directory + tables + DLL_NAME + EXPORT + TARGET


def build() -> bytes:
    edata = export_section()
    dos = b"MZ" + b"\0" * 58 + struct.pack("<I", 0x40)          # e_lfanew = 0x40
    coff = struct.pack("<HHIIIHH", 0x8664, 1, 0, 0, 0, 240,     # AMD64, 1 section, PE32+ opt. header
                       0x2022)                                  # EXECUTABLE | LARGE_ADDRESS_AWARE | DLL
    opt = struct.pack("<HBBIIIII", 0x20B, 14, 0, 0, ALIGN_FILE, 0, 0, SECT_RVA)  # no code, no entry point
    opt += struct.pack("<QII", 0x180000000, ALIGN_SECT, ALIGN_FILE)               # ImageBase, alignments
    opt += struct.pack("<HHHHHHI", 6, 0, 0, 0, 6, 0, 0)                           # OS/image/subsystem versions
    opt += struct.pack("<IIIHH", SECT_RVA + ALIGN_SECT, 0x200, 0, 3, 0x0100)      # SizeOfImage/Headers, CONSOLE, NX
    opt += struct.pack("<QQQQII", 0x100000, 0x1000, 0x100000, 0x1000, 0, 16)      # stack/heap, 16 data dirs
    opt += struct.pack("<II", SECT_RVA, len(edata)) + b"\0" * 8 * 15             # [0] = export directory
    section = struct.pack("<8sIIIIIIHHI", b".edata", len(edata), SECT_RVA, ALIGN_FILE, SECT_RAW,
                          0, 0, 0, 0, 0x40000040)               # INITIALIZED_DATA | MEM_READ
    headers = dos + b"PE\0\0" + coff + opt + section
    assert len(opt) == 240 and len(headers) <= SECT_RAW and len(edata) <= ALIGN_FILE
    return headers.ljust(SECT_RAW, b"\0") + edata.ljust(ALIGN_FILE, b"\0")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make-prng-forwarder.py OUT.dll")
    with open(sys.argv[1], "wb") as f:
        f.write(build())
