"""Packs an already built `toolgate` binary into a wheel (the layout maturin's binary mode
makes: the program in the wheel's scripts), so tests install the command with pip without
building it a second time.

Usage: wheel_from_binary.py BINARY VERSION OUT_FOLDER  -> prints the wheel's path
"""

import base64
import hashlib
import os
import sys
import sysconfig
import zipfile


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main():
    binary, version, out = sys.argv[1], sys.argv[2], sys.argv[3]
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    tag = f"py3-none-{platform}"
    dist = f"toolgate-{version}"
    wheel_path = os.path.join(out, f"{dist}-{tag}.whl")
    with open(binary, "rb") as program:
        executable = program.read()
    files = {
        f"{dist}.data/scripts/toolgate": executable,
        f"{dist}.dist-info/METADATA": (
            f"Metadata-Version: 2.1\nName: toolgate\nVersion: {version}\n"
            "Summary: Tools a language model can call, safely.\n"
        ).encode(),
        f"{dist}.dist-info/WHEEL": (
            f"Wheel-Version: 1.0\nGenerator: toolgate wheel_from_binary\nRoot-Is-Purelib: false\nTag: {tag}\n"
        ).encode(),
    }
    record = f"{dist}.dist-info/RECORD"
    lines = [record_line(name, data) for name, data in files.items()] + [f"{record},,"]
    files[record] = ("\n".join(lines) + "\n").encode()
    os.makedirs(out, exist_ok=True)
    with zipfile.ZipFile(wheel_path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as wheel:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (0o100755 if name.endswith("/toolgate") else 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
    print(wheel_path)


if __name__ == "__main__":
    main()
