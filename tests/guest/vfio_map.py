#!/usr/bin/env python3
"""Guest side of tests/rnic_vm.rs: the guest kernel's VFIO with the
virtual IOMMU, without any rnic code. Opens /dev/vfio/GROUP, attaches it to
a type1v2 container, maps SIZE bytes of anonymous memory at IOVA for the
device (read and write), reads the device's config space through the VFIO
device fd, prints "mapped iova=0x... size=0x... vendor=0x... device=0x...",
then keeps the mapping for HOLD seconds
so the host can look at the server's IOMMU table, and exits 0.

    vfio_map.py GROUP BDF IOVA SIZE HOLD
"""
import ctypes
import fcntl
import mmap
import os
import struct
import sys
import time


def io(nr):  # _IO(';', 100 + nr)
    return (ord(";") << 8) | (100 + nr)


VFIO_SET_IOMMU = io(2)
VFIO_GROUP_SET_CONTAINER = io(4)
VFIO_GROUP_GET_DEVICE_FD = io(6)
VFIO_DEVICE_GET_REGION_INFO = io(8)
VFIO_IOMMU_MAP_DMA = io(13)
VFIO_TYPE1v2_IOMMU = 3
VFIO_PCI_CONFIG_REGION_INDEX = 7

group, bdf = sys.argv[1], sys.argv[2]
iova, size, hold = int(sys.argv[3], 0), int(sys.argv[4], 0), float(sys.argv[5])
container = os.open("/dev/vfio/vfio", os.O_RDWR)
g = os.open(f"/dev/vfio/{group}", os.O_RDWR)
fcntl.ioctl(g, VFIO_GROUP_SET_CONTAINER, struct.pack("i", container))
fcntl.ioctl(container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU)
buf = mmap.mmap(-1, size)
vaddr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
# struct vfio_iommu_type1_dma_map { argsz, flags (READ|WRITE), vaddr, iova, size }
fcntl.ioctl(container, VFIO_IOMMU_MAP_DMA, struct.pack("IIQQQ", 32, 3, vaddr, iova, size))
dev = fcntl.ioctl(g, VFIO_GROUP_GET_DEVICE_FD, bytearray(bdf.encode() + b"\0"))
# struct vfio_region_info { argsz, flags, index, cap_offset, size, offset }
info = bytearray(struct.pack("IIIIQQ", 32, 0, VFIO_PCI_CONFIG_REGION_INDEX, 0, 0, 0))
fcntl.ioctl(dev, VFIO_DEVICE_GET_REGION_INFO, info)
cfg_off = struct.unpack("IIIIQQ", info)[5]
ids = os.pread(dev, 4, cfg_off)
vendor, device = struct.unpack("<HH", ids)
print(f"mapped iova={iova:#x} size={size:#x} vendor={vendor:#06x} device={device:#06x}", flush=True)
time.sleep(hold)
