//! perftest's TCP exchange over real sockets.
//!
//! The loopback tests always run: our client against our server on
//! 127.0.0.1, every test kind.
//!
//! The `real_*` tests run a real perftest opposite our implementation and
//! are skipped unless `RNIC_PERFTEST_DIR` names a directory holding the
//! `ib_*` binaries. They only check the TCP exchange, so the real program
//! must be able to finish its data phase without a peer NIC: run it on a
//! verbs provider that completes every work request at once, preloaded for
//! the child only with `RNIC_PERFTEST_PRELOAD=/path/to/fake.so`, built from
//! `fake_verbs.c` beside this file (`apt-get install libibverbs-dev perftest`,
//! `gcc -shared -fPIC -O2 -o /tmp/libfake.so fake_verbs.c`). The real data
//! phase against rdma_rxe is covered by `tests/interop_rxe.rs`.
//! `RNIC_PERFTEST_ARGS` replaces the default extra arguments
//! (`-x 1 -F --use_old_post_send -n 100`). `ib_write_lat` cannot finish that
//! way (it polls its buffer for the peer's WRITEs); its tests only check
//! that, our side done, the real program is still running (in its data
//! phase) rather than exited with an error, and then stop it.

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use rnic_interop::perftest::{
    client_finish, client_handshake, server_finish, server_handshake, BwReport, Dest, IbvMtu,
    Params, Role, TestKind,
};

const GID_A: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 2, 2];
const GID_B: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 2, 15];

fn dest(qpn: u32, gid: [u8; 16]) -> Dest {
    Dest::new(qpn, 0x123456, 0x4242, 0x7f12_3456_7000, gid)
}

#[test]
fn loopback_tcp_every_kind() {
    for kind in TestKind::ALL {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            s.set_nodelay(true).unwrap();
            let p = Params::new(kind);
            let hs =
                server_handshake(&mut s, kind, &p, &[dest(0x20, GID_B)], |_, _| Ok(())).unwrap();
            let fin = server_finish(&mut s, &hs, None).unwrap();
            (hs, fin)
        });
        let mut c = TcpStream::connect(addr).unwrap();
        c.set_nodelay(true).unwrap();
        let mut p = Params::new(kind);
        p.mtu = IbvMtu::Mtu4096;
        let hs = client_handshake(&mut c, kind, &p, &[dest(0x10, GID_A)], |_, _| Ok(())).unwrap();
        let report = BwReport::from_run(hs.size, hs.iters, Duration::from_millis(10), false);
        let fin = client_finish(&mut c, &hs, Some(&report)).unwrap();
        let (shs, sfin) = server.join().unwrap();
        assert_eq!(hs.remote, vec![dest(0x20, GID_B)], "{kind:?}");
        assert_eq!(shs.remote, vec![dest(0x10, GID_A)], "{kind:?}");
        assert_eq!(hs.negotiated.mtu, IbvMtu::Mtu1024);
        assert_eq!(fin.peer_sent_done, kind.closes_with_done());
        if kind.exchanges_bw_reports() {
            assert_eq!(sfin.peer_report, Some(report));
        }
    }
}

struct Real {
    dir: String,
    preload: Option<String>,
    args: Vec<String>,
}

fn real() -> Option<Real> {
    let dir = std::env::var("RNIC_PERFTEST_DIR").ok()?;
    let args = std::env::var("RNIC_PERFTEST_ARGS")
        .unwrap_or_else(|_| "-x 1 -F --use_old_post_send -n 100".into())
        .split_whitespace()
        .map(String::from)
        .collect();
    Some(Real {
        dir,
        preload: std::env::var("RNIC_PERFTEST_PRELOAD").ok(),
        args,
    })
}

impl Real {
    fn spawn(&self, kind: TestKind, port: u16, server_host: Option<&str>) -> Child {
        let mut cmd = Command::new(format!("{}/{}", self.dir, kind.program()));
        cmd.args(&self.args).arg("-p").arg(port.to_string());
        if let Some(h) = server_host {
            cmd.arg(h);
        }
        if let Some(p) = &self.preload {
            cmd.env("LD_PRELOAD", p);
        }
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits for the real program; `ib_write_lat` must instead still be
/// running (in its data phase) and is stopped. Returns its output; panics
/// on failure.
fn conclude(kind: TestKind, mut child: Child) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut alive_in_data_phase = false;
    if kind == TestKind::WriteLat {
        thread::sleep(Duration::from_millis(500));
        alive_in_data_phase = child.try_wait().unwrap().is_none();
        let _ = child.kill();
    }
    loop {
        if child.try_wait().unwrap().is_some() || Instant::now() > deadline {
            break;
        }
        thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let status = child.wait().unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let text = format!("--- stdout\n{out}--- stderr\n{err}");
    if kind == TestKind::WriteLat {
        assert!(
            alive_in_data_phase,
            "{kind:?} exited with {status} before its data phase\n{text}"
        );
    } else {
        assert!(status.success(), "{kind:?} exited with {status}\n{text}");
    }
    text
}

fn local_for(hs_size_kind: TestKind) -> Params {
    let mut p = Params::new(hs_size_kind);
    p.iters = 100;
    p
}

#[test]
fn real_perftest_server_our_client() {
    let Some(real) = real() else {
        eprintln!("RNIC_PERFTEST_DIR not set: skipping the real perftest tests");
        return;
    };
    for kind in TestKind::ALL {
        let port = free_port();
        let child = real.spawn(kind, port, None);
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut s = loop {
            match TcpStream::connect(("127.0.0.1", port)) {
                Ok(s) => break s,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    thread::sleep(Duration::from_millis(50));
                }
                Err(e) => panic!("{kind:?}: cannot connect: {e}"),
            }
        };
        s.set_nodelay(true).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let p = local_for(kind);
        let mut stages = 0;
        let hs = client_handshake(&mut s, kind, &p, &[dest(0x10, GID_A)], |_, hs| {
            stages += 1;
            assert_eq!(hs.remote.len(), 1);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert_eq!(stages, 2);
        assert_eq!(hs.negotiated.peer_version, "6.06");
        assert!(hs.remote[0].gid_is_ipv4_mapped());
        let report = BwReport::from_run(hs.size, hs.iters, Duration::from_millis(5), false);
        let fin =
            client_finish(&mut s, &hs, Some(&report)).unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        let text = conclude(kind, child);
        if kind.exchanges_bw_reports() {
            // The real server prints the report we sent.
            let line = format!("{}      {}", report.size, report.iters);
            assert!(text.contains(&line), "{kind:?}: {line:?} not in\n{text}");
            assert!(fin.peer_report.is_some());
        }
        eprintln!(
            "{kind:?} (real server): remote {} done {}",
            hs.remote[0], fin.peer_sent_done
        );
    }
}

#[test]
fn real_perftest_client_our_server() {
    let Some(real) = real() else {
        eprintln!("RNIC_PERFTEST_DIR not set: skipping the real perftest tests");
        return;
    };
    for kind in TestKind::ALL {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let child = real.spawn(kind, port, Some("127.0.0.1"));
        let (mut s, _) = listener.accept().unwrap();
        s.set_nodelay(true).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let p = local_for(kind);
        let hs = server_handshake(&mut s, kind, &p, &[dest(0x20, GID_B)], |_, _| Ok(()))
            .unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert_eq!(hs.role, Role::Server);
        assert_eq!(hs.negotiated.peer_version, "6.06");
        let fin = server_finish(&mut s, &hs, None).unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        conclude(kind, child);
        if kind.exchanges_bw_reports() {
            let r = fin.peer_report.expect("report");
            assert_eq!((r.size, r.iters), (hs.size, 100), "{kind:?}");
            assert!(r.bw_avg > 0.0 && r.msg_rate > 0.0, "{r:?}");
        }
        if kind.closes_with_done() {
            assert!(fin.peer_sent_done, "{kind:?}");
        }
        eprintln!(
            "{kind:?} (real client): remote {} report {:?}",
            hs.remote[0], fin.peer_report
        );
    }
}
