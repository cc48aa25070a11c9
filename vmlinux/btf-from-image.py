#!/usr/bin/python3
"""Copy the kernel BTF out of a boot image: btf-from-image.py IMAGE OUT

A kernel built with CONFIG_DEBUG_INFO_BTF carries its BTF in the image
(the .BTF section, between __start_BTF and __stop_BTF), and /sys/kernel/
btf/vmlinux serves those bytes. A boot image (arm64's Image, x86's
bzImage payload) is no ELF file, so bpftool cannot find the section by
name; this finds the blob by its header instead: the BTF magic, version
1, a 24-byte header, and type and string sections that end inside the
image. Exactly one such header must be there. IMAGE may be gzip-compressed
(a vmlinuz), or a linux-image .deb holding one boot/vmlinuz-*."""
import glob
import gzip
import os
import re
import struct
import subprocess
import sys
import tempfile

HEADER = struct.Struct("<HBBIIIII")  # magic version flags hdr_len type_off type_len str_off str_len
MAGIC = 0xEB9F


def image_bytes(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] == b"!<arch>\n":  # a .deb: its data.tar.* holds boot/vmlinuz-*
        with tempfile.TemporaryDirectory() as d:
            subprocess.run(["dpkg-deb", "-x", path, d], check=True)
            names = glob.glob(os.path.join(d, "boot", "vmlinuz-*"))
            if len(names) != 1:
                sys.exit(f"btf-from-image: {path} holds no single boot/vmlinuz-*: {names}")
            return image_bytes(names[0])
    if data[:2] == b"\x1f\x8b":
        return gzip.decompress(data)
    return data


def find_btf(data):
    found = []
    for m in re.finditer(re.escape(struct.pack("<HBB", MAGIC, 1, 0)) + re.escape(struct.pack("<I", 24)),
                         data):
        _, _, _, hdr_len, type_off, type_len, str_off, str_len = HEADER.unpack_from(data, m.start())
        end = hdr_len + max(type_off + type_len, str_off + str_len)
        if type_len and str_len and m.start() + end <= len(data) \
                and data[m.start() + hdr_len + str_off] == 0:  # the string section starts with ""
            found.append((m.start(), end))
    return found


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: btf-from-image.py IMAGE OUT")
    data = image_bytes(sys.argv[1])
    found = find_btf(data)
    if len(found) != 1:
        sys.exit(f"btf-from-image: {sys.argv[1]}: expected one BTF header, found {len(found)}"
                 " (a kernel without CONFIG_DEBUG_INFO_BTF, or a compression this script"
                 " does not undo)")
    start, size = found[0]
    with open(sys.argv[2], "wb") as f:
        f.write(data[start:start + size])
    print(f"btf-from-image: {size} bytes of BTF at offset {start:#x}", file=sys.stderr)


if __name__ == "__main__":
    main()
