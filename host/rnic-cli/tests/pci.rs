//! `rnic list`, `info` and `regs` on PCI functions of a fake sysfs tree
//! (`RNIC_SYSFS_ROOT`): the sysfs backend over a `resource0` file holding
//! an ID block, and the one-line refusals of functions rnic cannot or must
//! not open. No simulator and no hardware needed.

use std::process::{Command, Output};

use rnic_pci::fake::FakeSysfs;

const RNIC: &str = "0000:03:00.0";
const VIRTIO: &str = "0000:00:03.0";

fn rnic(tree: &FakeSysfs, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rnic"))
        .args(args)
        .env("RNIC_SYSFS_ROOT", &tree.root)
        .output()
        .expect("run rnic")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The ID block of the rnic's BAR0.
const ID_WORDS: &[(usize, u32)] = &[
    (0x00, rnic_regs::BLOCK_TYPE_ID),
    (0x04, 0x0001_0000),
    (0x0c, rnic_regs::MAGIC),
    (0x10, 0x0001_0002),
    (0x14, 0x1234_abcd),
    (0x1c, 64),
    (0x20, 16),
    (0x24, 0x1f),
    (0x28, 0x61),
    (0x2c, 64),
    (0x30, 8),
    (0x34, 8),
    (0x38, 16),
    (0x3c, 64),
];

/// An rnic (no driver, IOMMU group 4 translated) with an ID block in
/// BAR0, and a virtio NIC bound to virtio-pci.
fn tree() -> FakeSysfs {
    let f = FakeSysfs::new();
    f.add(RNIC, 0x1234, 0x4e49, 0x020000)
        .group(RNIC, 4, "DMA-FQ")
        .bar0(RNIC, ID_WORDS)
        .add(VIRTIO, 0x1af4, 0x1041, 0x020000)
        .bind(VIRTIO, "virtio-pci");
    f
}

#[test]
fn list_shows_driver_group_and_how_to_bind() {
    let f = tree();
    let o = rnic(&f, &["list"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains(&format!(
            "{RNIC}   rnic PCI 1234:4e49, no driver, IOMMU group 4; opens with sysfs:{RNIC}"
        )),
        "{out}"
    );
    assert!(out.contains(&format!(
        "echo vfio-pci > /sys/bus/pci/devices/{RNIC}/driver_override"
    )));
    assert!(out.contains(&format!("driverctl set-override {RNIC} vfio-pci")));
    assert!(
        !out.contains(VIRTIO),
        "only rnic functions are listed: {out}"
    );

    let o = rnic(&f, &["list", "--json"]);
    let v: Vec<serde_json::Value> = text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v["kind"] == "pci")
        .collect();
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["device"], RNIC);
    assert_eq!(v[0]["driver"], serde_json::Value::Null);
    assert_eq!(v[0]["iommu_group"], 4);
    assert_eq!(v[0]["iommu"], true);
    assert_eq!(v[0]["opens_with"], "sysfs");
    assert!(v[0]["vfio"].as_str().unwrap().contains("not to vfio-pci"));
    assert_eq!(v[0]["bind_vfio"].as_array().unwrap().len(), 3);
}

#[test]
fn info_and_regs_through_sysfs() {
    let f = tree();
    for dev in [RNIC, "sysfs:03:00.0"] {
        let o = rnic(&f, &["info", "--device", dev, "--json"]);
        assert!(o.status.success(), "{dev}: {}", text(&o.stderr));
        let v: serde_json::Value = serde_json::from_str(&text(&o.stdout)).unwrap();
        assert_eq!(v["device"], format!("sysfs:{RNIC}"));
        assert_eq!(v["num_queues"], 16);
        assert_eq!(v["mrs"], 64);
        assert_eq!(v["git_hash"], "1234abcd");
        assert_eq!(v["qpn_bits"], 0);
    }
    let o = rnic(&f, &["info", "--device", RNIC]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout)
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["MR", "table", "64", "memory", "regions"]),
        "{}",
        text(&o.stdout)
    );
    assert!(
        text(&o.stdout).contains("QP numbers    as slots (no directory)"),
        "{}",
        text(&o.stdout)
    );
    // a build with a QP directory of 16-bit QP numbers
    let dir: Vec<_> = ID_WORDS.iter().copied().chain([(0x48, 16)]).collect();
    f.bar0(RNIC, &dir);
    let o = rnic(&f, &["info", "--device", RNIC, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&text(&o.stdout)).unwrap();
    assert_eq!(v["qpn_bits"], 16);
    let o = rnic(&f, &["info", "--device", RNIC]);
    assert!(
        text(&o.stdout).contains("QP numbers    65,536 (directory over 16 slots)"),
        "{}",
        text(&o.stdout)
    );
    // a build older than id.mrs reads 0 there: not reported
    let old: Vec<_> = ID_WORDS.iter().copied().filter(|w| w.0 != 0x3c).collect();
    f.bar0(RNIC, &old);
    let o = rnic(&f, &["info", "--device", RNIC, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&text(&o.stdout)).unwrap();
    assert_eq!(v["mrs"], serde_json::Value::Null);
    let o = rnic(&f, &["info", "--device", RNIC]);
    assert!(
        text(&o.stdout).contains("MR table      not reported"),
        "{}",
        text(&o.stdout)
    );
    f.bar0(RNIC, ID_WORDS);
    let o = rnic(&f, &["regs", "--device", RNIC]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("0x524e4943"),
        "{}",
        text(&o.stdout)
    );
}

fn refused(f: &FakeSysfs, dev: &str, want: &str) {
    let o = rnic(f, &["info", "--device", dev]);
    let e = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{dev}: {e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{dev}: not one line: {e}");
    assert!(e.contains(want), "{dev}: {e}");
    assert!(o.stdout.is_empty());
}

#[test]
fn refusals_are_one_line_and_write_nothing() {
    let f = tree();
    let virtio_bar = std::fs::read(f.dev(VIRTIO).join("resource0")).unwrap();
    for dev in [VIRTIO, "sysfs:00:03.0", "vfio:00:03.0"] {
        refused(
            &f,
            dev,
            "0000:00:03.0 is not an rnic: PCI id 1af4:1041 (rnic functions are 1234:4e49)",
        );
    }
    assert_eq!(
        std::fs::read(f.dev(VIRTIO).join("resource0")).unwrap(),
        virtio_bar
    );

    refused(
        &f,
        "vfio:03:00.0",
        "bound to no driver, not to vfio-pci; bind it: ",
    );
    refused(&f, "07:00.0", "no PCI function 0000:07:00.0");

    // An rnic PCI id with a BAR0 that is not an rnic's: refused by the
    // magic, BAR0 untouched.
    f.bar0(RNIC, &[]);
    refused(&f, RNIC, "is not an rnic: magic 0x00000000 at BAR0+0x0c");
    assert!(std::fs::read(f.dev(RNIC).join("resource0"))
        .unwrap()
        .iter()
        .all(|&b| b == 0));

    // Another major version of the register map.
    f.bar0(
        RNIC,
        &[
            (0x00, rnic_regs::BLOCK_TYPE_ID),
            (0x04, 0x0002_0000),
            (0x0c, rnic_regs::MAGIC),
        ],
    );
    refused(&f, RNIC, "register map version 2.0, this rnic speaks 1.x");
}

/// `torture --completions event` waits for interrupts, which sysfs has
/// none of: refused in one line, before anything is written to BAR0 (the
/// same run polled gets past that point).
#[test]
fn event_completions_are_refused_on_sysfs() {
    let f = tree();
    let bar = std::fs::read(f.dev(RNIC).join("resource0")).unwrap();
    let o = rnic(
        &f,
        &[
            "torture",
            "--device",
            "sysfs:03:00.0",
            "--onchip-loopback",
            "--completions",
            "event",
        ],
    );
    let e = text(&o.stderr);
    eprintln!("{e}");
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "not one line: {e}");
    assert!(
        e.contains("--completions event waits for interrupts: ") && e.contains("no interrupts"),
        "{e}"
    );
    assert_eq!(std::fs::read(f.dev(RNIC).join("resource0")).unwrap(), bar);
    let o = rnic(
        &f,
        &["torture", "--device", "sysfs:03:00.0", "--onchip-loopback"],
    );
    eprintln!("polled: {}", text(&o.stderr));
    assert!(
        !text(&o.stderr).contains("--completions event"),
        "{}",
        text(&o.stderr)
    );
}
