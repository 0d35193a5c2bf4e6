//! `rnic interop`: the simulated NIC against Linux soft-RoCE (`rdma_rxe`) in
//! a QEMU guest: ibv_rc_pingpong, WRITE_WITH_IMM (pyverbs), ib_write_bw,
//! ib_send_lat, ib_read_bw, ib_read_lat and ib_atomic_bw (FETCH_AND_ADD,
//! CMP_AND_SWAP) and RDMA READ (pyverbs), rnic as requester (client, the
//! reader in the READ tests) and as responder (server), over a fabric
//! profile.
//! Exit status 0 all passed, 1 a run failed, 2 setup error (no QEMU, no
//! image, guest did not boot).

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use clap::Args;
use rnic_interop::suite::{self, RunSpec, Test};
use rnic_interop::{Guest, GuestConfig, Role};

#[derive(Args)]
pub struct InteropArgs {
    /// Guest image directory (vmlinuz, initrd.img, rootfs.ext4).
    #[arg(long, env = "RNIC_GUEST_IMAGE", default_value_os_t = default_image())]
    pub image: PathBuf,
    /// Build the guest image first if it is missing or stale (root;
    /// debootstrap from the Debian mirror apt uses; about 2 minutes).
    #[arg(long)]
    pub build_image: bool,
    /// Tests to run: pingpong, write-imm, write-bw, send-lat, read,
    /// read-bw, read-lat, atomic-bw (ib_atomic_bw, FETCH_AND_ADD),
    /// atomic-bw-cas (ib_atomic_bw -A CMP_AND_SWAP).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "pingpong,write-imm,write-bw,send-lat,read,read-bw,read-lat,atomic-bw,atomic-bw-cas"
    )]
    pub tests: Vec<String>,
    /// rnic's roles: requester (rnic sends; in the READ tests: rnic reads;
    /// in the atomic tests: rnic is ib_atomic_bw's client and issues the
    /// atomics), responder (the guest sends; in the READ tests: the guest
    /// reads; in the atomic tests: the guest sends atomics, rnic executes
    /// them).
    #[arg(long, value_delimiter = ',', default_value = "requester,responder")]
    pub roles: Vec<String>,
    /// Fabric profiles between rnic and the guest (e.g. ideal,lossy).
    #[arg(long, value_delimiter = ',', default_value = "ideal")]
    pub fabric: Vec<String>,
    /// Path MTUs (256..4096).
    #[arg(long, value_delimiter = ',', default_value = "1024")]
    pub mtu: Vec<u32>,
    /// Messages (iterations) per run (read: READs, cycling through its
    /// sizes 1, PMTU-1, PMTU, PMTU+1, 3 PMTU+17 and 64 KiB; the atomic
    /// tests: atomics).
    #[arg(long, default_value_t = 50)]
    pub iters: u32,
    /// Message size in bytes (write-imm: the size of each of its 4 WRITEs;
    /// read and the atomic tests: not used, perftest's atomics are 8 bytes).
    #[arg(long, default_value_t = 4096)]
    pub size: u32,
    /// read: READs the reader keeps outstanding at most (rnic grants 4 and
    /// issues at most 4).
    #[arg(long, default_value_t = 4)]
    pub read_depth: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long, default_value_t = 64)]
    pub data_w: u32,
    /// Write a pcap of every run here (`<test>-<role>-<fabric>-<mtu>.pcap`).
    #[arg(long)]
    pub pcap_dir: Option<PathBuf>,
    /// Wall-clock limit of each run, in seconds.
    #[arg(long, default_value_t = 300)]
    pub limit: u64,
    /// Seconds the guest may take to boot and bring rxe0 up.
    #[arg(long, default_value_t = 240)]
    pub boot_timeout: u64,
    /// Sockets and the guest console log go here.
    #[arg(long, default_value_os_t = std::env::temp_dir().join(format!("rnic-interop-{}", std::process::id())))]
    pub run_dir: PathBuf,
    /// One JSON object per run on stdout.
    #[arg(long)]
    pub json: bool,
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `target/rxe-guest` of this checkout.
pub fn default_image() -> PathBuf {
    repo_root().join("target/rxe-guest")
}

pub fn build_image(dir: &std::path::Path) -> Result<()> {
    let script = repo_root().join("sim/rxe-guest/build-image.sh");
    let st = Command::new("bash")
        .arg(&script)
        .arg(dir)
        .status()
        .with_context(|| format!("running {}", script.display()))?;
    if !st.success() {
        bail!("{} {} failed ({st})", script.display(), dir.display());
    }
    Ok(())
}

pub fn run(a: &InteropArgs) -> Result<ExitCode> {
    let tests = a
        .tests
        .iter()
        .map(|t| {
            Test::from_name(t).with_context(|| {
                format!(
                    "unknown test {t:?}; valid: {}",
                    Test::ALL.map(Test::name).join(", ")
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let roles = a
        .roles
        .iter()
        .map(|r| match r.as_str() {
            "requester" => Ok(Role::Requester),
            "responder" => Ok(Role::Responder),
            _ => bail!("unknown role {r:?}; valid: requester, responder"),
        })
        .collect::<Result<Vec<_>>>()?;
    if !tests.iter().any(|t| roles.iter().any(|&r| t.supports(r))) {
        let why: Vec<String> = tests
            .iter()
            .flat_map(|t| {
                roles
                    .iter()
                    .filter_map(move |&r| t.unsupported(r).map(|w| format!("{}: {w}", t.name())))
            })
            .collect();
        bail!(
            "nothing to run with these roles (try --roles responder): {}",
            why.join("; ")
        );
    }
    for f in &a.fabric {
        rnic_sim::FabricConfig::profile(f).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    for &m in &a.mtu {
        rnic_harness::mtu_from_bytes(m).map_err(|e| anyhow::anyhow!("--mtu: {e}"))?;
    }
    if a.build_image {
        build_image(&a.image)?;
    }
    if let Some(d) = &a.pcap_dir {
        std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
    }
    let mut gc = GuestConfig::new(&a.image, &a.run_dir);
    gc.boot_timeout = Duration::from_secs(a.boot_timeout);
    let t0 = Instant::now();
    eprintln!(
        "rnic interop: booting the rxe guest ({})",
        a.image.display()
    );
    let mut guest = Guest::boot(&gc)?;
    eprintln!(
        "rnic interop: guest ready in {:.1} s: rxe0 GID {} active MTU {}",
        guest.boot_time.as_secs_f64(),
        std::net::Ipv6Addr::from(guest.gid),
        guest.active_mtu
    );
    let mut failed = 0;
    let mut n = 0;
    for f in &a.fabric {
        for &mtu in &a.mtu {
            for &t in &tests {
                for &role in &roles {
                    if let Some(why) = t.unsupported(role) {
                        if !a.json && f == &a.fabric[0] && mtu == a.mtu[0] {
                            println!(
                                "skip  {:<13} rnic {:<9}: {why}",
                                t.name(),
                                format!("{role:?}").to_lowercase()
                            );
                        }
                        continue;
                    }
                    n += 1;
                    let mut spec = RunSpec::new(t, role);
                    spec.fabric = f.clone();
                    spec.mtu = mtu;
                    spec.seed = a.seed;
                    spec.data_w = a.data_w;
                    spec.iters = a.iters;
                    spec.size = a.size;
                    spec.depth = a.read_depth;
                    spec.limit = Duration::from_secs(a.limit);
                    spec.pcap = a.pcap_dir.as_ref().map(|d| {
                        d.join(format!(
                            "{}-{}-{f}-{mtu}.pcap",
                            t.name(),
                            match role {
                                Role::Requester => "requester",
                                Role::Responder => "responder",
                            }
                        ))
                    });
                    match suite::run_one(&mut guest, &spec) {
                        Ok(r) => {
                            if a.json {
                                println!("{}", serde_json::to_string(&r)?);
                            } else {
                                println!(
                                    "ok    {:<13} rnic {:<9} {:<7} mtu {:<4}: sent {} msgs / {} B, received {} msgs, {} B checked; frames {} to guest, {} from guest, {} dropped; rnic retransmits {} timeouts {}; {} cycles, {:.1} s",
                                    t.name(),
                                    format!("{role:?}").to_lowercase(),
                                    f,
                                    mtu,
                                    r.messages_sent,
                                    r.bytes_sent,
                                    r.messages_received,
                                    r.bytes_checked,
                                    r.frames_to_guest,
                                    r.frames_from_guest,
                                    r.frames_dropped,
                                    r.rnic_retransmits,
                                    r.rnic_timeouts,
                                    r.cycles,
                                    r.wall_secs
                                );
                                if let Some(n) = &r.note {
                                    println!("      note: {n}");
                                }
                                if let Some(rd) = &r.read {
                                    let counters = if rd.responder == "rnic" {
                                        format!(
                                            "{} READ requests served, {} responses sent",
                                            r.rnic_read_requests, r.rnic_read_responses
                                        )
                                    } else {
                                        format!(
                                            "{} responses placed, {} packets sent again, {} timeouts, {} dropped for their PSN; {} destination and {} guard bytes checked in rnic's buffer",
                                            rd.placed,
                                            rd.tx_retransmits,
                                            rd.rtx_timeouts,
                                            rd.rx_drop_psn,
                                            rd.dest_bytes_checked,
                                            rd.guard_bytes_checked
                                        )
                                    };
                                    println!(
                                        "      READ: {} READs / {} B served by {} (at most {} outstanding); on the wire: {} requests ({} dropped by the link, {} sent again, {} re-requests of PSNs already answered, {} out of sequence), {} responses / {} B ({} dropped), {} B of them checked against {}'s region, {} ACKs, {} NAKs ({} for a PSN sequence error, {} of them late); rnic's counters: {counters}",
                                        rd.reads,
                                        rd.bytes,
                                        rd.responder,
                                        rd.depth,
                                        rd.requests,
                                        rd.requests_dropped,
                                        rd.resent,
                                        rd.re_requests,
                                        rd.out_of_sequence,
                                        rd.responses,
                                        rd.response_bytes,
                                        rd.responses_dropped,
                                        rd.wire_bytes_checked,
                                        rd.responder,
                                        rd.acks,
                                        rd.naks,
                                        rd.seq_naks,
                                        rd.late_naks
                                    );
                                }
                                if let Some(at) = &r.atomic {
                                    println!(
                                        "      atomics ({}): {} executed of {} issued (port.rx_atomic +{}, port.rx_atomic_replay +{}); on the wire: {} requests ({} dropped by the link, {} again of which rnic left {} unanswered, {} out of sequence), {} ATOMIC ACKNOWLEDGEs ({} dropped, {} answering a PSN again), {} original values checked, {} NAKs ({} for a PSN sequence error); {} CMP_AND_SWAPs took their swap; values add {:?} swap {:?} compare {:?}; {} operands and {} region bytes checked after the run",
                                        at.op.map_or("?", |o| o.arg()),
                                        at.executed,
                                        at.iters,
                                        at.rx_atomic,
                                        at.rx_atomic_replay,
                                        at.requests,
                                        at.requests_dropped,
                                        at.re_requests,
                                        at.re_requests_unanswered,
                                        at.out_of_sequence,
                                        at.atomic_acks,
                                        at.atomic_acks_dropped,
                                        at.atomic_acks_again,
                                        at.orig_values_checked,
                                        at.naks,
                                        at.seq_naks,
                                        at.swaps_taken,
                                        at.add_values,
                                        at.swap_values,
                                        at.compare_values,
                                        at.operands_checked,
                                        at.region_bytes_checked
                                    );
                                }
                                if let Some(at) = &r.atomic_client {
                                    println!(
                                        "      atomics ({}) issued by rnic: {} of {} completed (at most {} posted); on the wire: {} requests ({} dropped by the link, {} sent again), {} ATOMIC ACKNOWLEDGEs from the guest ({} dropped by the link, {} answering a PSN again, {} reached rnic), {} ACKs, {} NAKs ({} for a PSN sequence error); values add {:?} swap {:?} compare {:?}; {} original values checked where rnic placed them, {} successive values on {} operands checked; rnic's counters: {} answers placed, {} packets sent again, {} dropped for their PSN",
                                        at.op.map_or("?", |o| o.arg()),
                                        at.completed,
                                        at.iters,
                                        at.depth,
                                        at.requests,
                                        at.requests_dropped,
                                        at.resent,
                                        at.atomic_acks,
                                        at.atomic_acks_dropped,
                                        at.atomic_acks_again,
                                        at.atomic_acks_delivered,
                                        at.acks,
                                        at.naks,
                                        at.seq_naks,
                                        at.add_values,
                                        at.swap_values,
                                        at.compare_values,
                                        at.values_checked,
                                        at.operand_steps_checked,
                                        at.operands,
                                        at.placed,
                                        at.tx_retransmits,
                                        at.rx_drop_psn
                                    );
                                }
                                if let Some(line) = guest_summary(&r.guest_output) {
                                    println!("      guest: {line}");
                                }
                                println!(
                                    "      rnic dropped {} of the guest's frames (icrc {}, malformed/not ours {}, qp {}, duplicate/psn {}); rxe0 counters: {}",
                                    r.rnic_rx_dropped,
                                    r.rnic_rx_drop_icrc,
                                    r.rnic_rx_drop_malformed,
                                    r.rnic_rx_drop_qp,
                                    r.rnic_rx_drop_psn,
                                    r.rxe_counters
                                        .iter()
                                        .map(|(k, v)| format!("{k} +{v}"))
                                        .collect::<Vec<_>>()
                                        .join(", ")
                                );
                            }
                        }
                        Err(e) => {
                            failed += 1;
                            println!(
                                "FAIL  {:<13} rnic {:<9} {:<7} mtu {:<4}: {e}",
                                t.name(),
                                format!("{role:?}").to_lowercase(),
                                f,
                                mtu
                            );
                            println!("      repeat: {}", spec.command());
                            if guest.busy() {
                                eprintln!("rnic interop: the guest's program is still running; rebooting the guest");
                                guest = guest.reboot()?;
                            }
                        }
                    }
                }
            }
        }
    }
    guest.shutdown();
    eprintln!(
        "rnic interop: {} of {n} runs passed in {:.0} s",
        n - failed,
        t0.elapsed().as_secs_f64()
    );
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The line of a guest program's output worth showing (its result).
fn guest_summary(out: &str) -> Option<String> {
    out.lines()
        .rev()
        .find(|l| {
            let l = l.trim();
            l.starts_with('{')
                || l.contains("Mbit/sec")
                || l.contains("usec/iter")
                || l.chars().next().is_some_and(|c| c.is_ascii_digit())
        })
        .map(|l| l.trim().to_string())
}
