//! A scripted stand-in for the Ethernet side of `rnic_core` (pure Rust):
//! sends queued frames on `m_axis_tx`, records what arrives on `s_axis_rx`
//! and checks its AXI-Stream format. The PCIe side stays idle.

#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use rnic_sim::{Model, PortsIn, PortsOut};

/// A frame to send.
#[derive(Clone, Debug, Default)]
pub struct TxFrame {
    pub data: Vec<u8>,
    /// End it with tuser = 1 (abort).
    pub user: bool,
    /// Malformed: keep of the first beat not full.
    pub keep_hole: bool,
}

impl TxFrame {
    pub fn new(data: Vec<u8>) -> Self {
        Self {
            data,
            ..Self::default()
        }
    }
}

/// A frame received on `s_axis_rx`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RxRecord {
    /// Cycle its last beat was accepted.
    pub cycle: u64,
    pub data: Vec<u8>,
    pub user: bool,
}

#[derive(Default)]
pub struct MacNicState {
    pub cycle: u64,
    pub tx: VecDeque<TxFrame>,
    tx_pos: usize,
    /// Cycle each sent frame's last beat was accepted.
    pub tx_done: Vec<u64>,
    pub rx: Vec<RxRecord>,
    rx_cur: Vec<u8>,
    /// Never accept on `s_axis_rx`.
    pub rx_stop: bool,
    /// Accept only on cycles divisible by this (0/1: always).
    pub rx_ready_every: u64,
    /// Format problems seen on `s_axis_rx`.
    pub rx_errors: Vec<String>,
}

pub struct MacNic {
    pub data_w: u32,
    pub s: Rc<RefCell<MacNicState>>,
}

impl MacNic {
    pub fn boxed(data_w: u32) -> (Box<dyn Model>, Rc<RefCell<MacNicState>>) {
        let s = Rc::new(RefCell::new(MacNicState::default()));
        (
            Box::new(Self {
                data_w,
                s: s.clone(),
            }),
            s,
        )
    }
}

impl Model for MacNic {
    fn data_w(&self) -> u32 {
        self.data_w
    }

    fn step(&mut self, inp: &PortsIn, out: &mut PortsOut) {
        let w = (self.data_w / 8) as usize;
        let full: u64 = if w >= 64 { u64::MAX } else { (1 << w) - 1 };
        let mut g = self.s.borrow_mut();
        let st = &mut *g;
        let c = st.cycle;
        st.cycle += 1;
        *out = PortsOut::default();
        if inp.rst != 0 {
            return;
        }
        // ---- outputs before the edge
        let ready = !st.rx_stop && (st.rx_ready_every <= 1 || c % st.rx_ready_every == 0);
        out.s_axis_rx_tready = u8::from(ready);
        if let Some(f) = st.tx.front() {
            let n = (f.data.len() - st.tx_pos).min(w);
            out.m_axis_tx_tdata[..n].copy_from_slice(&f.data[st.tx_pos..st.tx_pos + n]);
            out.m_axis_tx_tkeep = if n >= 64 { u64::MAX } else { (1 << n) - 1 };
            if f.keep_hole && st.tx_pos == 0 {
                out.m_axis_tx_tkeep &= !2;
            }
            let last = st.tx_pos + n >= f.data.len();
            out.m_axis_tx_tlast = u8::from(last);
            out.m_axis_tx_tuser = u8::from(last && f.user);
            out.m_axis_tx_tvalid = 1;
        }
        // ---- the edge
        if out.m_axis_tx_tvalid != 0 && inp.m_axis_tx_tready != 0 {
            st.tx_pos += w;
            if out.m_axis_tx_tlast != 0 {
                st.tx.pop_front();
                st.tx_pos = 0;
                st.tx_done.push(c);
            }
        }
        if inp.s_axis_rx_tvalid != 0 && ready {
            let keep = inp.s_axis_rx_tkeep & full;
            let last = inp.s_axis_rx_tlast != 0;
            if !last && keep != full {
                st.rx_errors
                    .push(format!("cycle {c}: keep {keep:#x} on a non-last beat"));
            }
            if last && (keep == 0 || keep & keep.wrapping_add(1) != 0) {
                st.rx_errors
                    .push(format!("cycle {c}: keep {keep:#x} on the last beat"));
            }
            if !last && inp.s_axis_rx_tuser != 0 {
                st.rx_errors
                    .push(format!("cycle {c}: tuser on a non-last beat"));
            }
            let n = keep.count_ones() as usize;
            if inp.s_axis_rx_tdata[n..w].iter().any(|&b| b != 0) {
                st.rx_errors
                    .push(format!("cycle {c}: bytes beyond tkeep not zero"));
            }
            st.rx_cur.extend_from_slice(&inp.s_axis_rx_tdata[..n]);
            if last {
                let data = std::mem::take(&mut st.rx_cur);
                st.rx.push(RxRecord {
                    cycle: c,
                    data,
                    user: inp.s_axis_rx_tuser != 0,
                });
            }
        }
    }
}
