//! A scripted stand-in for `rnic_core` (pure Rust), to test the root-complex
//! model without RTL: tests queue TLPs for it to send and read what it got.

#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use rnic_sim::tlp::{CplHeader, Dw0, ReqHeader, CPL_SC, FMT_3DW_DATA, TYPE_CPL};
use rnic_sim::{Model, PortsIn, PortsOut};

/// A TLP the NIC sends on `tx_wr_req` / `tx_rd_req`.
#[derive(Clone, Debug)]
pub struct OutTlp {
    pub hdr: [u32; 4],
    pub payload: Vec<u32>,
    /// Override keep of the last beat (malformed-TLP tests).
    pub keep_override: Option<u32>,
}

/// A completion beat the NIC received on `rx_cpl`.
#[derive(Clone, Debug)]
pub struct CplBeat {
    pub cycle: u64,
    pub hdr: [u32; 4],
    pub data: Vec<u32>,
    pub keep: u32,
    pub last: bool,
}

/// A whole completion TLP received on `rx_cpl`.
#[derive(Clone, Debug)]
pub struct RxCpl {
    pub cycle: u64,
    pub hdr: CplHeader,
    pub payload: Vec<u32>,
}

/// Called with each completion as its last beat arrives.
pub type CplHook = Box<dyn FnMut(&RxCpl)>;

#[derive(Default)]
pub struct NicState {
    pub cycle: u64,
    pub wr: VecDeque<OutTlp>,
    pub wr_pos: usize,
    pub rd: VecDeque<[u32; 4]>,
    pub msi: VecDeque<u8>,
    /// MMIO requests received (hdr, data, cycle).
    pub mmio: Vec<([u32; 4], u32, u64)>,
    /// Completions to MMIO reads waiting to go out.
    pub tx_cpl: VecDeque<[u32; 5]>,
    /// Answer MMIO reads at all?
    pub mute: bool,
    pub rx_cpls: Vec<RxCpl>,
    cur: Option<RxCpl>,
    /// Called with each completion as its last beat arrives.
    pub on_cpl: Option<CplHook>,
    /// Cycles in which tx_wr_req had valid high but ready low.
    pub wr_stalls: u64,
    pub requester_id: u16,
    pub saw_reset: bool,
    /// Issue reads and MSIs only when no write is queued (as the RTL orders
    /// them behind earlier writes). Default true.
    pub rd_msi_after_writes: bool,
    /// Break the AXI-Stream rule: hide tx_wr_req valid on odd cycles.
    pub flaky_valid: bool,
}

pub struct ScriptNic {
    pub data_w: u32,
    pub s: Rc<RefCell<NicState>>,
}

impl ScriptNic {
    pub fn new(data_w: u32) -> (Self, Rc<RefCell<NicState>>) {
        let s = Rc::new(RefCell::new(NicState {
            requester_id: 0x0100,
            rd_msi_after_writes: true,
            ..Default::default()
        }));
        (
            Self {
                data_w,
                s: s.clone(),
            },
            s,
        )
    }
}

/// Value the stand-in returns for an MMIO read of `offset`.
pub fn mmio_value(offset: u64) -> u32 {
    0x5A00_0000 ^ (offset as u32).wrapping_mul(0x9E37)
}

impl Model for ScriptNic {
    fn data_w(&self) -> u32 {
        self.data_w
    }

    fn step(&mut self, inp: &PortsIn, out: &mut PortsOut) {
        let lanes = (self.data_w / 32) as usize;
        let mut st = self.s.borrow_mut();
        let st = &mut *st;
        st.cycle += 1;
        if inp.rst != 0 {
            st.saw_reset = true;
            *out = PortsOut::default();
            return;
        }
        // ---- outputs before the edge
        *out = PortsOut {
            rx_req_ready: 1,
            rx_cpl_ready: 1,
            ..PortsOut::default()
        };
        if let Some(t) = st.wr.front() {
            let n = t.payload.len();
            let k = (n - st.wr_pos).min(lanes);
            out.tx_wr_req_valid = 1;
            out.tx_wr_req_hdr = t.hdr;
            for i in 0..k {
                out.tx_wr_req_data[i] = t.payload[st.wr_pos + i];
            }
            out.tx_wr_req_keep = if k == 0 { 0 } else { (1 << k) - 1 };
            let last = st.wr_pos + k >= n;
            out.tx_wr_req_last = u8::from(last);
            if last {
                if let Some(ko) = t.keep_override {
                    out.tx_wr_req_keep = ko;
                }
            }
        }
        if st.flaky_valid && st.cycle % 2 == 1 {
            out.tx_wr_req_valid = 0;
        }
        let may = !st.rd_msi_after_writes || st.wr.is_empty();
        if let (Some(h), true) = (st.rd.front(), may) {
            out.tx_rd_req_valid = 1;
            out.tx_rd_req_hdr = *h;
        }
        if let (Some(&v), true) = (st.msi.front(), may) {
            out.msi_valid = 1;
            out.msi_vector = v;
        }
        if let Some(c) = st.tx_cpl.front() {
            out.tx_cpl_valid = 1;
            out.tx_cpl_hdr = [c[0], c[1], c[2], c[3]];
            out.tx_cpl_data[0] = c[4];
            out.tx_cpl_keep = (c[0] >> 30) & 1;
            out.tx_cpl_last = 1;
        }
        // ---- the edge
        if out.tx_wr_req_valid != 0 {
            if inp.tx_wr_req_ready != 0 {
                let n = st.wr.front().unwrap().payload.len();
                st.wr_pos += lanes;
                if st.wr_pos >= n {
                    st.wr.pop_front();
                    st.wr_pos = 0;
                }
            } else {
                st.wr_stalls += 1;
            }
        }
        if out.tx_rd_req_valid != 0 && inp.tx_rd_req_ready != 0 {
            st.rd.pop_front();
        }
        if out.msi_valid != 0 && inp.msi_ready != 0 {
            st.msi.pop_front();
        }
        if out.tx_cpl_valid != 0 && inp.tx_cpl_ready != 0 {
            st.tx_cpl.pop_front();
        }
        if inp.rx_req_valid != 0 {
            let h = ReqHeader::decode(&inp.rx_req_hdr);
            st.mmio.push((inp.rx_req_hdr, inp.rx_req_data[0], st.cycle));
            if !h.dw0.has_data() && !st.mute {
                let offset = h.addr & 0xffff;
                let c = CplHeader {
                    dw0: Dw0 {
                        fmt: FMT_3DW_DATA,
                        typ: TYPE_CPL,
                        length_dw: 1,
                        ..Dw0::default()
                    },
                    completer_id: st.requester_id,
                    status: CPL_SC,
                    bcm: false,
                    byte_count: 4,
                    requester_id: h.requester_id,
                    tag: h.tag,
                    lower_addr: (h.addr & 0x7f) as u8,
                };
                let e = c.encode();
                st.tx_cpl
                    .push_back([e[0], e[1], e[2], e[3], mmio_value(offset)]);
            }
        }
        if inp.rx_cpl_valid != 0 {
            if st.cur.is_none() {
                st.cur = Some(RxCpl {
                    cycle: st.cycle,
                    hdr: CplHeader::decode(&inp.rx_cpl_hdr),
                    payload: Vec::new(),
                });
            }
            let cur = st.cur.as_mut().unwrap();
            for i in 0..lanes {
                if inp.rx_cpl_keep & (1 << i) != 0 {
                    cur.payload.push(inp.rx_cpl_data[i]);
                }
            }
            if inp.rx_cpl_last != 0 {
                let c = st.cur.take().unwrap();
                if let Some(f) = st.on_cpl.as_mut() {
                    f(&c);
                }
                st.rx_cpls.push(c);
            }
        }
    }
}

/// A MemWr TLP from the NIC (requester 0x0100).
pub fn mem_wr(addr: u64, bytes: &[u8], ro: bool) -> OutTlp {
    // Dword-aligned payload with byte enables from addr and length.
    let start = addr & !3;
    let end = addr + bytes.len() as u64;
    let n_dw = ((end.next_multiple_of(4) - start) / 4) as u32;
    let mut buf = vec![0u8; n_dw as usize * 4];
    buf[(addr - start) as usize..(addr - start) as usize + bytes.len()].copy_from_slice(bytes);
    let fbe = (0xfu8 << (addr & 3)) & 0xf;
    let lrem = (end & 3) as u32;
    let lbe = if lrem == 0 { 0xf } else { (1u8 << lrem) - 1 };
    let (first_be, last_be) = if n_dw == 1 {
        (fbe & lbe, 0)
    } else {
        (fbe, lbe)
    };
    let mut h = ReqHeader::mem(true, start, n_dw, first_be, last_be);
    h.requester_id = 0x0100;
    h.dw0.ro = ro;
    let payload = buf
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    OutTlp {
        hdr: h.encode(),
        payload,
        keep_override: None,
    }
}

/// A MemRd header from the NIC for `len` bytes at `addr` (1 <= len).
pub fn mem_rd(addr: u64, len: u32, tag: u8) -> [u32; 4] {
    let start = addr & !3;
    let end = addr + u64::from(len);
    let n_dw = ((end.next_multiple_of(4) - start) / 4) as u32;
    let fbe = (0xfu8 << (addr & 3)) & 0xf;
    let lrem = (end & 3) as u32;
    let lbe = if lrem == 0 { 0xf } else { (1u8 << lrem) - 1 };
    let (first_be, last_be) = if n_dw == 1 {
        (fbe & lbe, 0)
    } else {
        (fbe, lbe)
    };
    let mut h = ReqHeader::mem(false, start, n_dw, first_be, last_be);
    h.requester_id = 0x0100;
    h.tag = tag;
    h.encode()
}

pub fn payload_bytes(p: &[u32]) -> Vec<u8> {
    p.iter().flat_map(|d| d.to_le_bytes()).collect()
}
