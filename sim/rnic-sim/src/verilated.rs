//! The Verilated `rnic_core` models behind the C shim in csrc/shim.cpp,
//! one per entry of [`MODELS`] (src/model_table.rs, which build.rs reads
//! too): DATA_W 64 and 256 with the default knobs, and the write-only and
//! mp-only builds at DATA_W 64.

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::Path;

use crate::ports::{Model, PortsIn, PortsOut, PORT_OFFSETS};
use crate::SimError;

/// Whether this build contains the Verilated RTL (false until
/// `hw/rtl/rnic_core.v` exists when the crate is built).
pub const RTL_AVAILABLE: bool = cfg!(rnic_sim_rtl);

pub use crate::model_table::{ModelKnobs, MODELS, MODEL_WIDTHS};

#[allow(dead_code)]
struct VlFns {
    data_w: u32,
    in_size: unsafe extern "C" fn() -> usize,
    out_size: unsafe extern "C" fn() -> usize,
    port_offsets: unsafe extern "C" fn(*mut usize, usize) -> usize,
    create: unsafe extern "C" fn(u32) -> *mut c_void,
    destroy: unsafe extern "C" fn(*mut c_void),
    set_inputs: unsafe extern "C" fn(*mut c_void, *const PortsIn),
    get_outputs: unsafe extern "C" fn(*mut c_void, *mut PortsOut),
    eval: unsafe extern "C" fn(*mut c_void),
    tick: unsafe extern "C" fn(*mut c_void),
    step: unsafe extern "C" fn(*mut c_void, *const PortsIn, *mut PortsOut),
    trace_open: unsafe extern "C" fn(*mut c_void, *const c_char) -> c_int,
    trace_close: unsafe extern "C" fn(*mut c_void),
    trace_flush: unsafe extern "C" fn(*mut c_void),
    trace_dump: unsafe extern "C" fn(*mut c_void, u64),
    time: unsafe extern "C" fn(*mut c_void) -> u64,
}

#[cfg(rnic_sim_rtl)]
macro_rules! vl_model {
    ($m:ident, $tag:literal, $w:literal) => {
        mod $m {
            use super::*;
            extern "C" {
                #[link_name = concat!("rnic_", $tag, "_in_size")]
                pub fn in_size() -> usize;
                #[link_name = concat!("rnic_", $tag, "_out_size")]
                pub fn out_size() -> usize;
                #[link_name = concat!("rnic_", $tag, "_port_offsets")]
                pub fn port_offsets(o: *mut usize, n: usize) -> usize;
                #[link_name = concat!("rnic_", $tag, "_create")]
                pub fn create(seed: u32) -> *mut c_void;
                #[link_name = concat!("rnic_", $tag, "_destroy")]
                pub fn destroy(h: *mut c_void);
                #[link_name = concat!("rnic_", $tag, "_set_inputs")]
                pub fn set_inputs(h: *mut c_void, i: *const PortsIn);
                #[link_name = concat!("rnic_", $tag, "_get_outputs")]
                pub fn get_outputs(h: *mut c_void, o: *mut PortsOut);
                #[link_name = concat!("rnic_", $tag, "_eval")]
                pub fn eval(h: *mut c_void);
                #[link_name = concat!("rnic_", $tag, "_tick")]
                pub fn tick(h: *mut c_void);
                #[link_name = concat!("rnic_", $tag, "_step")]
                pub fn step(h: *mut c_void, i: *const PortsIn, o: *mut PortsOut);
                #[link_name = concat!("rnic_", $tag, "_trace_open")]
                pub fn trace_open(h: *mut c_void, path: *const c_char) -> c_int;
                #[link_name = concat!("rnic_", $tag, "_trace_close")]
                pub fn trace_close(h: *mut c_void);
                #[link_name = concat!("rnic_", $tag, "_trace_flush")]
                pub fn trace_flush(h: *mut c_void);
                #[link_name = concat!("rnic_", $tag, "_trace_dump")]
                pub fn trace_dump(h: *mut c_void, time: u64);
                #[link_name = concat!("rnic_", $tag, "_time")]
                pub fn time(h: *mut c_void) -> u64;
            }
            pub static FNS: VlFns = VlFns {
                data_w: $w,
                in_size,
                out_size,
                port_offsets,
                create,
                destroy,
                set_inputs,
                get_outputs,
                eval,
                tick,
                step,
                trace_open,
                trace_close,
                trace_flush,
                trace_dump,
                time,
            };
        }
    };
}

// One `vl_model!` per entry of `MODELS` and `fns_for`, written by build.rs
// from the same table.
#[cfg(rnic_sim_rtl)]
include!(concat!(env!("OUT_DIR"), "/models.rs"));

#[cfg(not(rnic_sim_rtl))]
fn fns_for(_data_w: u32, _knobs: ModelKnobs) -> Option<&'static VlFns> {
    None
}

/// One Verilated `rnic_core` with its own `VerilatedContext`, so several
/// can live in one process. Not `Send`: keep it on the thread that made it.
pub struct VerilatedModel {
    h: *mut c_void,
    f: &'static VlFns,
}

impl VerilatedModel {
    /// Build a model of width `data_w` with the default knobs; `seed` seeds
    /// the `--x-initial unique` reset values of every register.
    pub fn new(data_w: u32, seed: u32) -> Result<Self, SimError> {
        Self::with_knobs(data_w, ModelKnobs::Full, seed)
    }

    /// Build the model of width `data_w` and build `knobs`.
    pub fn with_knobs(data_w: u32, knobs: ModelKnobs, seed: u32) -> Result<Self, SimError> {
        if !RTL_AVAILABLE {
            return Err(SimError::NoRtl);
        }
        let f = fns_for(data_w, knobs).ok_or(SimError::NoModel { data_w, knobs })?;
        // SAFETY: plain C functions without preconditions.
        let (is, os) = unsafe { ((f.in_size)(), (f.out_size)()) };
        if is != std::mem::size_of::<PortsIn>() || os != std::mem::size_of::<PortsOut>() {
            return Err(SimError::Abi(format!(
                "port struct sizes differ: C++ {is}/{os}, Rust {}/{}",
                std::mem::size_of::<PortsIn>(),
                std::mem::size_of::<PortsOut>()
            )));
        }
        let mut offs = [0usize; PORT_OFFSETS.len()];
        // SAFETY: writes at most `offs.len()` entries.
        let n = unsafe { (f.port_offsets)(offs.as_mut_ptr(), offs.len()) };
        if n != PORT_OFFSETS.len() || offs != PORT_OFFSETS {
            return Err(SimError::Abi(format!(
                "port struct field offsets differ: C++ {offs:?} ({n} fields), Rust {PORT_OFFSETS:?}"
            )));
        }
        // SAFETY: returns an owned handle or null.
        let h = unsafe { (f.create)(seed) };
        if h.is_null() {
            return Err(SimError::Abi("model creation failed".into()));
        }
        Ok(Self { h, f })
    }

    /// Start writing an FST waveform (2 time units per clock cycle: the
    /// inputs of cycle `n` change at `2n`, its rising edge is at `2n+1`).
    pub fn trace_open(&mut self, path: &Path) -> Result<(), SimError> {
        let c = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| SimError::Wave(path.to_path_buf()))?;
        // SAFETY: valid handle and NUL-terminated path.
        let rc = unsafe { (self.f.trace_open)(self.h, c.as_ptr()) };
        if rc != 0 {
            return Err(SimError::Wave(path.to_path_buf()));
        }
        Ok(())
    }

    pub fn trace_close(&mut self) {
        // SAFETY: valid handle.
        unsafe { (self.f.trace_close)(self.h) }
    }

    pub fn trace_flush(&mut self) {
        // SAFETY: valid handle.
        unsafe { (self.f.trace_flush)(self.h) }
    }

    /// Dump the current signal values into the waveform at `time` (trace
    /// units; must not go backwards). Only needed when driving the model
    /// with `set_inputs`/`eval`: `step` and `tick` dump by themselves.
    pub fn trace_dump(&mut self, time: u64) {
        // SAFETY: valid handle.
        unsafe { (self.f.trace_dump)(self.h, time) }
    }

    /// Set the inputs without clocking.
    pub fn set_inputs(&mut self, inp: &PortsIn) {
        // SAFETY: valid handle, struct layout checked in `new`.
        unsafe { (self.f.set_inputs)(self.h, inp) }
    }

    /// Read the outputs as they are now.
    pub fn get_outputs(&mut self, out: &mut PortsOut) {
        // SAFETY: valid handle, struct layout checked in `new`.
        unsafe { (self.f.get_outputs)(self.h, out) }
    }

    /// Evaluate combinational logic without a clock edge.
    pub fn eval(&mut self) {
        // SAFETY: valid handle.
        unsafe { (self.f.eval)(self.h) }
    }

    /// One full clock cycle (clk 0->1 with eval, then 1->0 with eval).
    pub fn tick(&mut self) {
        // SAFETY: valid handle.
        unsafe { (self.f.tick)(self.h) }
    }

    /// Simulation time in trace units (2 per clock cycle).
    pub fn time(&self) -> u64 {
        // SAFETY: valid handle.
        unsafe { (self.f.time)(self.h) }
    }
}

impl Model for VerilatedModel {
    fn data_w(&self) -> u32 {
        self.f.data_w
    }

    #[inline]
    fn step(&mut self, inp: &PortsIn, out: &mut PortsOut) {
        // SAFETY: valid handle, struct layout checked in `new`.
        unsafe { (self.f.step)(self.h, inp, out) }
    }
}

impl Drop for VerilatedModel {
    fn drop(&mut self) {
        // SAFETY: handle owned by us, destroyed once.
        unsafe { (self.f.destroy)(self.h) }
    }
}
