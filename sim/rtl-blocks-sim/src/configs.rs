// The Verilated configurations of the blocks: one model per entry, built by
// build.rs (which `include!`s this file) and looked up by name from Rust.

/// Which block a configuration elaborates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(dead_code)] // build.rs reads only some of it
pub enum Kind {
    /// `axis_register`: WIDTH
    Register,
    /// `axis_arb_mux` (with `arbiter`): PORTS, WIDTH, ROUND_ROBIN, OUT_REG
    ArbMux,
    /// `icrc_subst`: DATA_W, OH_W
    IcrcSubst,
    /// `ram_sdp` (block RAM, registered transparent read): DATA_W, ADDR_W,
    /// DEPTH
    Ram,
    /// `ram_sdp_copies` (a record with N_RD read ports, each a ram_sdp of
    /// its slice): DATA_W, ADDR_W, DEPTH, N_RD, and per port p `RD_LSB[p]`,
    /// `RD_W[p]`; `INIT[i]` is bits 32i+31:32i of INIT
    RamCopies,
    /// `ram_rec` (a ram_sdp_copies with a record port: a copy of the
    /// whole record read whole, a whole-record write that yields to the
    /// module's): the parameters of `RamCopies`
    RamRec,
    /// `rec_map` (qpc_fill's word port onto N_REC ram_rec record ports:
    /// the records' layout in the slot's 64-bit words): N_REC, SLOT_W,
    /// REC_WORDS, and per record r `REC_W[r]`
    RecMap,
    /// `rec_port_mux` (one record word port onto N modules' record ports
    /// by word ranges, the answer ORed and registered): N, SLOT_W, WORD_W,
    /// and per port i `BASE[i]` (its first word), `LOG[i]` (log2 of its
    /// word count)
    RecPortMux,
    /// `mr_table` (memory-region keys, bounds and translation): NUM_MR
    Mr,
    /// `tag_match` (which of N entries hold a key, combinational): N,
    /// KEY_W
    TagMatch,
    /// `onehot_mux` (the OR of the inputs a one-hot select picks,
    /// combinational): N, W
    OnehotMux,
    /// `slot_allocator` (a shared pool's free bits, lowest free first):
    /// SLOTS
    Alloc,
    /// `mp_window` (the mp responder's receive window, stage by stage):
    /// MP_W, MP_NAK_GAP
    MpWindow,
    /// `rc_message` (the rc responder's message state and packet checks):
    /// NUM_QP, QN_W
    RcMessage,
    /// `mp_deferred` (the mp responder's parked completions and their
    /// slot pool): NUM_QP, QN_W, MP_PEND, MP_WIMM
    MpDeferred,
    /// `axis_async_fifo` (a stream from one clock to another, Gray
    /// pointers through two flops, an output register): WIDTH, ADDR_W.
    /// Two clocks: `PortsIn::pad[0]` says which rise in a step
    AsyncFifo,
    /// `tlp_upsize` (two TLP-stream beats into one of twice the width):
    /// IN_W
    TlpUpsize,
    /// `tlp_downsize` (one TLP-stream beat into two of half the width):
    /// OUT_W
    TlpDownsize,
    /// `completer` (the requester's ACK completer): QN_W, CLK_MHZ, TICK_LOG
    Completer,
    /// `path_pick` (a sprayed packet's path, avoiding paths out;
    /// combinational): no parameters
    PathPick,
    /// `path_health` (a QP's path health update; combinational): no
    /// parameters
    PathHealth,
    /// `ram_reset_sweep` (a record RAM's zeroing sweep after a reset that
    /// follows a write): DEPTH
    ResetSweep,
    /// `read_reply` (RDMA READ responses: jobs cut into PMTU packets, each
    /// payload read by DMA into a TX RAM slot, handed to roce_tx in PSN
    /// order; with ATOMIC_EN the atomics, executed one at a time): JOBS,
    /// SLOTS, SLOT_LOG, RAM_ADDR_W, SLOT_BASE, ID_TAG, ATOMIC_EN, DATA_W,
    /// QN_W, ATOM_RAM
    ReadReply,
    /// `read_track` (the READ table: the RDMA READs the requester issued,
    /// looked up by QP and PSN as their responses, ACKs and NAKs arrive):
    /// QN_W, NUM_RD, RD_IW
    ReadTrack,
    /// `atomic_replay` (the replay records of the atomics executed: a ring
    /// of DEPTH records per QP in block RAM, looked up by QP and PSN with
    /// the answer two cycles later, cleared by QP): NUM_QP, QN_W, DEPTH
    AtomicReplay,
    /// `qp_cache` (the QP context cache's directory: a QP number to an
    /// on-chip slot, set-associative, misses, victims, write-backs, pins,
    /// a miss queue that lets hits pass): QPN_W, SLOT_LOG, WAYS, MISSQ,
    /// ID_W, PIN_W
    QpCache,
    /// `qpc_fill` (the QP context cache's fill and write-back engine:
    /// records between the host table and the slots through DMA and a
    /// buffer per fill in flight): QPN_W, SLOT_LOG, REC_WORDS, FILLS, ID_W,
    /// LEN_W, RAM_ADDR_W, BUF_BASE
    QpcFill,
    /// `qp_ctx_cache` (the QP context cache: qp_cache joined to qpc_fill):
    /// QPN_W, SLOT_LOG, WAYS, MISSQ, ID_W, PIN_W, REC_WORDS, FILLS,
    /// RAM_ADDR_W, BUF_BASE
    QpCtxCache,
    /// `qp_dir` (the QP directory: QP numbers bound to slots by command, a
    /// receive stage that maps a packet's QP number to its slot, the
    /// CQEs' slot to number): NUM_Q, QN_W, QPN_W, META_W
    QpDir,
    /// `qpn_doorbell` (doorbells by QP number waiting in a small table for
    /// their lookup and, on a miss, their fetch): QN_W, LK_LAT, PEND,
    /// BACKOFF
    QpnDoorbell,
}

/// One configuration: a model name and the parameters it is verilated with.
/// A parameter named `NAME[i]` is entry i (bits 32i+31:32i) of the packed
/// parameter NAME, passed to Verilator as one vector of 32-bit entries.
#[derive(Debug, Clone, Copy)]
#[allow(dead_code)]
pub struct Config {
    pub name: &'static str,
    pub kind: Kind,
    pub params: &'static [(&'static str, u32)],
}

#[allow(dead_code)]
impl Config {
    /// A parameter's value (0 if the configuration does not set it); entry
    /// i of a packed one is `NAME[i]`.
    pub fn param(&self, name: &str) -> u32 {
        self.params
            .iter()
            .find(|p| p.0 == name)
            .map(|p| p.1)
            .unwrap_or(0)
    }
}

/// Every configuration built. Widths beyond 64 bits exercise Verilator's
/// wide words; the icrc_subst ones use the OH_W roce_tx/roce_rx pass
/// (header beats of a 74-byte header).
pub const CONFIGS: &[Config] = &[
    Config {
        name: "reg_w8",
        kind: Kind::Register,
        params: &[("WIDTH", 8)],
    },
    Config {
        name: "reg_w72",
        kind: Kind::Register,
        params: &[("WIDTH", 72)],
    },
    Config {
        name: "arb_p2_fixed",
        kind: Kind::ArbMux,
        params: &[
            ("PORTS", 2),
            ("WIDTH", 16),
            ("ROUND_ROBIN", 0),
            ("OUT_REG", 0),
        ],
    },
    Config {
        name: "arb_p3_rr",
        kind: Kind::ArbMux,
        params: &[
            ("PORTS", 3),
            ("WIDTH", 40),
            ("ROUND_ROBIN", 1),
            ("OUT_REG", 0),
        ],
    },
    Config {
        name: "arb_p4_fixed_reg",
        kind: Kind::ArbMux,
        params: &[
            ("PORTS", 4),
            ("WIDTH", 16),
            ("ROUND_ROBIN", 0),
            ("OUT_REG", 1),
        ],
    },
    Config {
        name: "arb_p5_rr_reg",
        kind: Kind::ArbMux,
        params: &[
            ("PORTS", 5),
            ("WIDTH", 72),
            ("ROUND_ROBIN", 1),
            ("OUT_REG", 1),
        ],
    },
    Config {
        name: "subst_w64",
        kind: Kind::IcrcSubst,
        params: &[("DATA_W", 64), ("OH_W", 10)],
    },
    Config {
        name: "subst_w128",
        kind: Kind::IcrcSubst,
        params: &[("DATA_W", 128), ("OH_W", 5)],
    },
    Config {
        name: "subst_w256",
        kind: Kind::IcrcSubst,
        params: &[("DATA_W", 256), ("OH_W", 3)],
    },
    Config {
        name: "subst_w512",
        kind: Kind::IcrcSubst,
        params: &[("DATA_W", 512), ("OH_W", 2)],
    },
    Config {
        name: "ram_w8_d16",
        kind: Kind::Ram,
        params: &[("DATA_W", 8), ("ADDR_W", 4), ("DEPTH", 16)],
    },
    Config {
        name: "ram_w72_d200",
        kind: Kind::Ram,
        params: &[("DATA_W", 72), ("ADDR_W", 8), ("DEPTH", 200)],
    },
    Config {
        name: "ram_w170_d256",
        kind: Kind::Ram,
        params: &[("DATA_W", 170), ("ADDR_W", 8), ("DEPTH", 256)],
    },
    // a record of 64 bits with an INIT: the whole record, a slice across a
    // word boundary and the top bits
    Config {
        name: "copies_w64_d16",
        kind: Kind::RamCopies,
        params: &[
            ("DATA_W", 64),
            ("ADDR_W", 4),
            ("DEPTH", 16),
            ("N_RD", 3),
            ("RD_LSB[0]", 0),
            ("RD_W[0]", 64),
            ("RD_LSB[1]", 20),
            ("RD_W[1]", 17),
            ("RD_LSB[2]", 59),
            ("RD_W[2]", 5),
            ("INIT[0]", 0x89ab_cdef),
            ("INIT[1]", 0x0123_4567),
        ],
    },
    // the requester's REQ record (43 bits): una alone, the whole record, one
    // bit at the top; 200 QPs
    Config {
        name: "copies_w43_d200",
        kind: Kind::RamCopies,
        params: &[
            ("DATA_W", 43),
            ("ADDR_W", 8),
            ("DEPTH", 200),
            ("N_RD", 3),
            ("RD_LSB[0]", 0),
            ("RD_W[0]", 24),
            ("RD_LSB[1]", 0),
            ("RD_W[1]", 43),
            ("RD_LSB[2]", 42),
            ("RD_W[2]", 1),
        ],
    },
    // ram_rec: one port reading a slice across a word boundary, an INIT
    // set, 16 words (the record copy in a 64-bit record)
    Config {
        name: "rec_w64_d16",
        kind: Kind::RamRec,
        params: &[
            ("DATA_W", 64),
            ("ADDR_W", 4),
            ("DEPTH", 16),
            ("N_RD", 1),
            ("RD_LSB[0]", 20),
            ("RD_W[0]", 17),
            ("INIT[0]", 0x89ab_cdef),
            ("INIT[1]", 0x0123_4567),
        ],
    },
    // ram_rec: a record across four bus words, 50 words (not a power of
    // two), three overlapping slices (the low 40 bits, bits 30..99, the top
    // bit), an INIT reaching the top bits
    Config {
        name: "rec_w100_d50",
        kind: Kind::RamRec,
        params: &[
            ("DATA_W", 100),
            ("ADDR_W", 6),
            ("DEPTH", 50),
            ("N_RD", 3),
            ("RD_LSB[0]", 0),
            ("RD_W[0]", 40),
            ("RD_LSB[1]", 30),
            ("RD_W[1]", 70),
            ("RD_LSB[2]", 99),
            ("RD_W[2]", 1),
            ("INIT[0]", 0x5555_aaaa),
            ("INIT[3]", 0x9),
        ],
    },
    // rec_map: a record of three words with four one-word records after
    // it (1 to 5 bits), padding at the end (7 of 8 words)
    Config {
        name: "rmap_r5_w8",
        kind: Kind::RecMap,
        params: &[
            ("N_REC", 5),
            ("SLOT_W", 3),
            ("REC_WORDS", 8),
            ("REC_W[0]", 178),
            ("REC_W[1]", 5),
            ("REC_W[2]", 1),
            ("REC_W[3]", 1),
            ("REC_W[4]", 1),
        ],
    },
    // rec_map: a record of exactly one word, one a bit over (two words), a
    // bit, one of six words (322 bits); 10 of 16 words, fields across the
    // bus words of the packed ports
    Config {
        name: "rmap_r4_w16",
        kind: Kind::RecMap,
        params: &[
            ("N_REC", 4),
            ("SLOT_W", 5),
            ("REC_WORDS", 16),
            ("REC_W[0]", 64),
            ("REC_W[1]", 65),
            ("REC_W[2]", 1),
            ("REC_W[3]", 322),
        ],
    },
    // rec_port_mux: the core's (rnic_transport: QPC, QM, CQ, REQ of 8 words
    // each, RSP of 32, slots of 6 bits); three ports of 4, 2 and 2 words
    // (ranges of different sizes, one slot bit); one port holding the whole
    // record of two words
    Config {
        name: "rpm_core",
        kind: Kind::RecPortMux,
        params: &[
            ("N", 5),
            ("SLOT_W", 6),
            ("WORD_W", 6),
            ("BASE[0]", 0),
            ("BASE[1]", 8),
            ("BASE[2]", 16),
            ("BASE[3]", 24),
            ("BASE[4]", 32),
            ("LOG[0]", 3),
            ("LOG[1]", 3),
            ("LOG[2]", 3),
            ("LOG[3]", 3),
            ("LOG[4]", 5),
        ],
    },
    Config {
        name: "rpm_n3_w3",
        kind: Kind::RecPortMux,
        params: &[
            ("N", 3),
            ("SLOT_W", 1),
            ("WORD_W", 3),
            ("BASE[0]", 0),
            ("BASE[1]", 4),
            ("BASE[2]", 6),
            ("LOG[0]", 2),
            ("LOG[1]", 1),
            ("LOG[2]", 1),
        ],
    },
    Config {
        name: "rpm_n1_w1",
        kind: Kind::RecPortMux,
        params: &[
            ("N", 1),
            ("SLOT_W", 6),
            ("WORD_W", 1),
            ("BASE[0]", 0),
            ("LOG[0]", 1),
        ],
    },
    // qp_dir: one slot, one number bit; 20 slots (not a power of two: junk
    // hints beyond NUM_Q) over 2^16 numbers; 64 slots over 256 numbers
    // (collisions and rebinding frequent)
    Config {
        name: "qd_n1",
        kind: Kind::QpDir,
        params: &[("NUM_Q", 1), ("QN_W", 1), ("QPN_W", 1), ("META_W", 8)],
    },
    Config {
        name: "qd_n20",
        kind: Kind::QpDir,
        params: &[("NUM_Q", 20), ("QN_W", 5), ("QPN_W", 16), ("META_W", 40)],
    },
    Config {
        name: "qd_n64",
        kind: Kind::QpDir,
        params: &[("NUM_Q", 64), ("QN_W", 6), ("QPN_W", 8), ("META_W", 13)],
    },
    // qpn_doorbell: the smallest table, with the longest lookup; the
    // core's; a full one with a short backoff
    Config {
        name: "qdb_p2",
        kind: Kind::QpnDoorbell,
        params: &[("QN_W", 8), ("LK_LAT", 5), ("PEND", 2), ("BACKOFF", 3)],
    },
    Config {
        name: "qdb_p4",
        kind: Kind::QpnDoorbell,
        params: &[("QN_W", 8), ("LK_LAT", 2), ("PEND", 4), ("BACKOFF", 64)],
    },
    Config {
        name: "qdb_p16",
        kind: Kind::QpnDoorbell,
        params: &[("QN_W", 8), ("LK_LAT", 1), ("PEND", 16), ("BACKOFF", 1)],
    },
    Config {
        name: "mr_n8",
        kind: Kind::Mr,
        params: &[("NUM_MR", 8)],
    },
    Config {
        name: "mr_n64",
        kind: Kind::Mr,
        params: &[("NUM_MR", 64)],
    },
    // one entry of one bit; the core's 16 rings keyed by QP number at 16
    // and at 1,024 QPs (five 32-bit words of tags); odd sizes (tags
    // across word boundaries)
    Config {
        name: "tag_n1_k1",
        kind: Kind::TagMatch,
        params: &[("N", 1), ("KEY_W", 1)],
    },
    Config {
        name: "tag_n16_k4",
        kind: Kind::TagMatch,
        params: &[("N", 16), ("KEY_W", 4)],
    },
    Config {
        name: "tag_n16_k10",
        kind: Kind::TagMatch,
        params: &[("N", 16), ("KEY_W", 10)],
    },
    Config {
        name: "tag_n5_k7",
        kind: Kind::TagMatch,
        params: &[("N", 5), ("KEY_W", 7)],
    },
    // one input of one bit; qp_cache's way tags (WAYS 4, TAG_W 8 at QPN_W
    // 16, SLOT_LOG 10) and its queued QP numbers at the largest queue
    // (MISSQ 16, QPN_W 24: twelve 32-bit words of inputs); odd sizes
    // (inputs across word boundaries, wider than a word)
    Config {
        name: "ohm_n1_w1",
        kind: Kind::OnehotMux,
        params: &[("N", 1), ("W", 1)],
    },
    Config {
        name: "ohm_n4_w8",
        kind: Kind::OnehotMux,
        params: &[("N", 4), ("W", 8)],
    },
    Config {
        name: "ohm_n16_w24",
        kind: Kind::OnehotMux,
        params: &[("N", 16), ("W", 24)],
    },
    Config {
        name: "ohm_n5_w37",
        kind: Kind::OnehotMux,
        params: &[("N", 5), ("W", 37)],
    },
    // a pool of one; an odd size; the responder's MP_PEND and the
    // requester's OST_RINGS at 256 QPs (8, 16); 32: the widest the port
    // struct carries
    Config {
        name: "alloc_s1",
        kind: Kind::Alloc,
        params: &[("SLOTS", 1)],
    },
    Config {
        name: "alloc_s3",
        kind: Kind::Alloc,
        params: &[("SLOTS", 3)],
    },
    Config {
        name: "alloc_s8",
        kind: Kind::Alloc,
        params: &[("SLOTS", 8)],
    },
    Config {
        name: "alloc_s16",
        kind: Kind::Alloc,
        params: &[("SLOTS", 16)],
    },
    Config {
        name: "alloc_s32",
        kind: Kind::Alloc,
        params: &[("SLOTS", 32)],
    },
    // the smallest, an odd depth (the counter wraps past DEPTH-1 unused
    // addresses) and a power of two
    Config {
        name: "sweep_d1",
        kind: Kind::ResetSweep,
        params: &[("DEPTH", 1)],
    },
    Config {
        name: "sweep_d5",
        kind: Kind::ResetSweep,
        params: &[("DEPTH", 5)],
    },
    Config {
        name: "sweep_d16",
        kind: Kind::ResetSweep,
        params: &[("DEPTH", 16)],
    },
    // the smallest ring and pool; four of each; more slots than the
    // largest PMTU needs (8 KiB) at another base, with a ring of eight
    Config {
        name: "rr_j2_s2",
        kind: Kind::ReadReply,
        params: &[
            ("JOBS", 2),
            ("SLOTS", 2),
            ("SLOT_LOG", 12),
            ("RAM_ADDR_W", 17),
            ("SLOT_BASE", 0x18000),
            ("ID_TAG", 0xc0),
            ("ATOMIC_EN", 0),
            ("DATA_W", 64),
            ("QN_W", 4),
        ],
    },
    Config {
        name: "rr_j4_s4",
        kind: Kind::ReadReply,
        params: &[
            ("JOBS", 4),
            ("SLOTS", 4),
            ("SLOT_LOG", 12),
            ("RAM_ADDR_W", 17),
            ("SLOT_BASE", 0x14000),
            ("ID_TAG", 0x5a),
            ("ATOMIC_EN", 0),
            ("DATA_W", 64),
            ("QN_W", 4),
        ],
    },
    Config {
        name: "rr_j8_s8",
        kind: Kind::ReadReply,
        params: &[
            ("JOBS", 8),
            ("SLOTS", 8),
            ("SLOT_LOG", 13),
            ("RAM_ADDR_W", 17),
            ("SLOT_BASE", 0x10000),
            ("ID_TAG", 0x81),
            ("ATOMIC_EN", 0),
            ("DATA_W", 64),
            ("QN_W", 4),
        ],
    },
    // atomics (ATOMIC_EN): the RAMs' word of 64 bits, two slots behind a
    // ring of four; of 256 bits (the snoop's and the write-back's lanes 0..7
    // of a wide word), eight jobs; QP numbers of 3 and 5 bits
    Config {
        name: "rr_atom_w64",
        kind: Kind::ReadReply,
        params: &[
            ("JOBS", 4),
            ("SLOTS", 2),
            ("SLOT_LOG", 12),
            ("RAM_ADDR_W", 17),
            ("SLOT_BASE", 0x18000),
            ("ID_TAG", 0x3c),
            ("ATOMIC_EN", 1),
            ("DATA_W", 64),
            ("QN_W", 3),
            ("ATOM_RAM", 0x100c8),
        ],
    },
    Config {
        name: "rr_atom_w256",
        kind: Kind::ReadReply,
        params: &[
            ("JOBS", 8),
            ("SLOTS", 4),
            ("SLOT_LOG", 12),
            ("RAM_ADDR_W", 17),
            ("SLOT_BASE", 0x10000),
            ("ID_TAG", 0xa5),
            ("ATOMIC_EN", 1),
            ("DATA_W", 256),
            ("QN_W", 5),
            ("ATOM_RAM", 0x0c0e0),
        ],
    },
    // per QP rings of DEPTH records: the smallest (2 QPs, QP numbers of 1
    // bit, 2 records); 8 QPs of 2; the responder's default (16 QPs,
    // DEPTH 4); 20 QPs of 8, fewer QPs than QP numbers (the RAMs are
    // NUM_QP deep)
    Config {
        name: "ar_n2_d2",
        kind: Kind::AtomicReplay,
        params: &[("NUM_QP", 2), ("QN_W", 1), ("DEPTH", 2)],
    },
    Config {
        name: "ar_n8_d2",
        kind: Kind::AtomicReplay,
        params: &[("NUM_QP", 8), ("QN_W", 3), ("DEPTH", 2)],
    },
    Config {
        name: "ar_n16_d4",
        kind: Kind::AtomicReplay,
        params: &[("NUM_QP", 16), ("QN_W", 4), ("DEPTH", 4)],
    },
    Config {
        name: "ar_n20_d8",
        kind: Kind::AtomicReplay,
        params: &[("NUM_QP", 20), ("QN_W", 5), ("DEPTH", 8)],
    },
    // the QP cache's directory: one way of four slots (QPN_W 10); two
    // ways of sixteen slots with a pin count of 2 bits (full pin counts);
    // four ways of 64 slots, MISSQ 4 (the suggested build at its small
    // end); four ways of 16 slots with a queue of 8 (hits at full rate
    // while misses wait); QP numbers of 5 bits over 4 sets of 2 ways and a
    // queue of 3 (heavy aliasing: 32 QPs, 8 slots)
    Config {
        name: "qpc_w1_s2",
        kind: Kind::QpCache,
        params: &[
            ("QPN_W", 10),
            ("SLOT_LOG", 2),
            ("WAYS", 1),
            ("MISSQ", 4),
            ("ID_W", 8),
            ("PIN_W", 3),
        ],
    },
    Config {
        name: "qpc_w2_s4",
        kind: Kind::QpCache,
        params: &[
            ("QPN_W", 16),
            ("SLOT_LOG", 4),
            ("WAYS", 2),
            ("MISSQ", 6),
            ("ID_W", 8),
            ("PIN_W", 2),
        ],
    },
    Config {
        name: "qpc_w4_s6",
        kind: Kind::QpCache,
        params: &[
            ("QPN_W", 16),
            ("SLOT_LOG", 6),
            ("WAYS", 4),
            ("MISSQ", 4),
            ("ID_W", 8),
            ("PIN_W", 4),
        ],
    },
    Config {
        name: "qpc_w4_s4_q8",
        kind: Kind::QpCache,
        params: &[
            ("QPN_W", 12),
            ("SLOT_LOG", 4),
            ("WAYS", 4),
            ("MISSQ", 8),
            ("ID_W", 8),
            ("PIN_W", 4),
        ],
    },
    Config {
        name: "qpc_alias",
        kind: Kind::QpCache,
        params: &[
            ("QPN_W", 5),
            ("SLOT_LOG", 3),
            ("WAYS", 2),
            ("MISSQ", 3),
            ("ID_W", 8),
            ("PIN_W", 2),
        ],
    },
    // the fill engine: one buffer, short records, a small QP space (the
    // hazard and the table bound hit often); four buffers, full records,
    // 2^10 slots, the buffers not at RAM address 0
    Config {
        name: "qfl_f1_r4",
        kind: Kind::QpcFill,
        params: &[
            ("QPN_W", 8),
            ("SLOT_LOG", 3),
            ("REC_WORDS", 4),
            ("FILLS", 1),
            ("ID_W", 8),
            ("LEN_W", 17),
            ("RAM_ADDR_W", 17),
            ("BUF_BASE", 0),
        ],
    },
    Config {
        name: "qfl_f4_r16",
        kind: Kind::QpcFill,
        params: &[
            ("QPN_W", 16),
            ("SLOT_LOG", 10),
            ("REC_WORDS", 16),
            ("FILLS", 4),
            ("ID_W", 8),
            ("LEN_W", 17),
            ("RAM_ADDR_W", 17),
            ("BUF_BASE", 0x1000),
        ],
    },
    // the whole context cache: a small one (evictions all the time, two
    // buffers, short records) and a realistic one
    Config {
        name: "qcc_small",
        kind: Kind::QpCtxCache,
        params: &[
            ("QPN_W", 8),
            ("SLOT_LOG", 3),
            ("WAYS", 2),
            ("MISSQ", 4),
            ("ID_W", 8),
            ("PIN_W", 2),
            ("REC_WORDS", 4),
            ("FILLS", 2),
            ("RAM_ADDR_W", 12),
            ("BUF_BASE", 0),
        ],
    },
    Config {
        name: "qcc_real",
        kind: Kind::QpCtxCache,
        params: &[
            ("QPN_W", 12),
            ("SLOT_LOG", 6),
            ("WAYS", 4),
            ("MISSQ", 8),
            ("ID_W", 8),
            ("PIN_W", 4),
            ("REC_WORDS", 16),
            ("FILLS", 4),
            ("RAM_ADDR_W", 14),
            ("BUF_BASE", 0x800),
        ],
    },
    // every window the core builds (MP_W 32, 64, 128), the build's NAK gap
    // (16) and one above half the window
    Config {
        name: "mpw_w32",
        kind: Kind::MpWindow,
        params: &[("MP_W", 32), ("MP_NAK_GAP", 16)],
    },
    Config {
        name: "mpw_w64",
        kind: Kind::MpWindow,
        params: &[("MP_W", 64), ("MP_NAK_GAP", 16)],
    },
    Config {
        name: "mpw_w128_gap40",
        kind: Kind::MpWindow,
        params: &[("MP_W", 128), ("MP_NAK_GAP", 40)],
    },
    // (no parameters: the bench keeps the QPs' messages)
    Config {
        name: "rcm",
        kind: Kind::RcMessage,
        params: &[],
    },
    // the smallest pool; an odd one; the build's (MP_PEND 8) over 20 QPs
    Config {
        name: "mpd_q4_p2",
        kind: Kind::MpDeferred,
        params: &[("NUM_QP", 4), ("QN_W", 2), ("MP_PEND", 2), ("MP_WIMM", 1)],
    },
    Config {
        name: "mpd_q16_p3",
        kind: Kind::MpDeferred,
        params: &[("NUM_QP", 16), ("QN_W", 4), ("MP_PEND", 3), ("MP_WIMM", 3)],
    },
    Config {
        name: "mpd_q20_p8",
        kind: Kind::MpDeferred,
        params: &[("NUM_QP", 20), ("QN_W", 5), ("MP_PEND", 8), ("MP_WIMM", 4)],
    },
    // the smallest FIFO (two entries: the round trip of the pointers
    // limits its rate), a deeper one, and pcie_clock_crossing's depth at
    // a width past 64 bits
    Config {
        name: "afifo_w40_a1",
        kind: Kind::AsyncFifo,
        params: &[("WIDTH", 40), ("ADDR_W", 1)],
    },
    Config {
        name: "afifo_w40_a3",
        kind: Kind::AsyncFifo,
        params: &[("WIDTH", 40), ("ADDR_W", 3)],
    },
    Config {
        name: "afifo_w72_a4",
        kind: Kind::AsyncFifo,
        params: &[("WIDTH", 72), ("ADDR_W", 4)],
    },
    // the core's TLP widths: 64 into 128, 128 into 256, and back
    Config {
        name: "tlpup_w64",
        kind: Kind::TlpUpsize,
        params: &[("IN_W", 64)],
    },
    Config {
        name: "tlpup_w128",
        kind: Kind::TlpUpsize,
        params: &[("IN_W", 128)],
    },
    Config {
        name: "tlpdown_w64",
        kind: Kind::TlpDownsize,
        params: &[("OUT_W", 64)],
    },
    Config {
        name: "tlpdown_w128",
        kind: Kind::TlpDownsize,
        params: &[("OUT_W", 128)],
    },
    Config {
        name: "cmp_q2",
        kind: Kind::Completer,
        params: &[("QN_W", 2), ("CLK_MHZ", 16), ("TICK_LOG", 6)],
    },
    Config {
        name: "cmp_q3",
        kind: Kind::Completer,
        params: &[("QN_W", 3), ("CLK_MHZ", 250), ("TICK_LOG", 6)],
    },
    // the core's READ table (rnic_transport: NUM_RD 4, at 16 QPs); three
    // entries over four QPs (an index no entry has; more READs per QP)
    Config {
        name: "rt_q4_n4",
        kind: Kind::ReadTrack,
        params: &[("QN_W", 4), ("NUM_RD", 4), ("RD_IW", 2)],
    },
    Config {
        name: "rt_q2_n3",
        kind: Kind::ReadTrack,
        params: &[("QN_W", 2), ("NUM_RD", 3), ("RD_IW", 2)],
    },
    Config {
        name: "path_pick",
        kind: Kind::PathPick,
        params: &[],
    },
    // (the threshold is an input, path_cfg.thresh: drawn per case)
    Config {
        name: "path_health",
        kind: Kind::PathHealth,
        params: &[],
    },
];
