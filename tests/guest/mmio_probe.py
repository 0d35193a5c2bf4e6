#!/usr/bin/env python3
"""Guest side of tests/rnic_vm.rs: read an rnic function's ID block
through sysfs (resource0, mmap) and time BAR0 reads and writes.

    mmio_probe.py BDF N [--forever]

Enables the device (memory decoding), prints
    magic=0x524e4943 read_us=R write_us=W loop_us=L
(R, W: mean per access over N, the Python loop's own cost L already taken
off). With --forever it then keeps reading the magic every 10 ms and never
exits (the runner must end it: a test of a server that dies).
Accesses are 32-bit loads and stores through ctypes (never byte copies).
"""
import ctypes
import mmap
import os
import sys
import time

bdf, n = sys.argv[1], int(sys.argv[2])
dev = f"/sys/bus/pci/devices/{bdf}"
with open(f"{dev}/enable", "w") as f:
    f.write("1")
fd = os.open(f"{dev}/resource0", os.O_RDWR | os.O_SYNC)
bar = mmap.mmap(fd, 0x10000, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
magic = ctypes.c_uint32.from_buffer(bar, 0x0C)  # id.magic
debug = ctypes.c_uint32.from_buffer(bar, 0x214)  # dma.debug: 0 = no switch
plain = ctypes.c_uint32(0)

value = magic.value
t0 = time.perf_counter()
for _ in range(n):
    plain.value
t1 = time.perf_counter()
for _ in range(n):
    magic.value
t2 = time.perf_counter()
for _ in range(n):
    debug.value = 0
magic.value  # the writes are posted: a read behind them waits for them
t3 = time.perf_counter()
loop = (t1 - t0) / n
print(
    f"magic={value:#010x} read_us={((t2 - t1) / n - loop) * 1e6:.1f} "
    f"write_us={((t3 - t2) / n - loop) * 1e6:.1f} loop_us={loop * 1e6:.2f}",
    flush=True,
)
if "--forever" in sys.argv:
    last = value
    while True:
        v = magic.value
        if v != last:
            print(f"magic now {v:#010x}", flush=True)
            last = v
        time.sleep(0.01)
