//! rnic-vfio-user: simulated rnic NICs (the Verilated RTL of `rnic-sim`)
//! presented as PCIe functions over the vfio-user protocol, so that a QEMU
//! guest (`-device vfio-user-pci`) sees each as an ordinary PCI device and
//! the guest kernel's VFIO or sysfs can drive it, with the NIC's DMA going
//! straight into guest memory through the root-complex model's IOMMU and
//! ordering rules (DESIGN.md section 7.7).
//!
//! - [`server`]: the server ([`start`], [`ServerConfig`], [`ServerHandle`]).
//! - [`config_space`]: the configuration space each function presents.
//! - [`guest_memory`]: a client's DMA regions mapped from their files.
//! - [`client`]: a `rnic_device::Device` that drives a server from this
//!   host over the same protocol (tests, and a host without a guest).

pub mod client;
pub mod config_space;
pub mod guest_memory;
pub mod server;

pub use client::VfioUserDevice;
pub use server::{start, ServerConfig, ServerError, ServerHandle, ServerStats};
