//! One Verilated model behind the C ABI that csrc/shim.cpp and
//! csrc/card.cpp both export under a symbol prefix: `<p>in_size`,
//! `<p>out_size` (the port structs' sizes, checked against Rust's),
//! `<p>create(seed)`, `<p>destroy(h)` and `<p>step(h, in, out)`.
//! [`model_fns!`](crate::model_fns) binds one prefix's symbols into a
//! [`Fns`] table, and [`FfiModel`] owns one model made from a table.

use std::ffi::c_void;

/// The five functions of one model build, for port structs `I` and `O`.
#[allow(dead_code)] // without a model nothing reads the table
pub(crate) struct Fns<I, O> {
    pub in_size: unsafe extern "C" fn() -> usize,
    pub out_size: unsafe extern "C" fn() -> usize,
    pub create: unsafe extern "C" fn(u32) -> *mut c_void,
    pub destroy: unsafe extern "C" fn(*mut c_void),
    pub step: unsafe extern "C" fn(*mut c_void, *const I, *mut O),
}

// (derived Clone/Copy would ask the same of I and O)
impl<I, O> Clone for Fns<I, O> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<I, O> Copy for Fns<I, O> {}

/// The table of the model whose C symbols start with `$prefix` (a string
/// literal), for port structs `$in` and `$out`.
#[macro_export]
#[doc(hidden)]
macro_rules! model_fns {
    ($prefix:literal, $in:ty, $out:ty) => {{
        extern "C" {
            #[link_name = concat!($prefix, "in_size")]
            fn in_size() -> usize;
            #[link_name = concat!($prefix, "out_size")]
            fn out_size() -> usize;
            #[link_name = concat!($prefix, "create")]
            fn create(seed: u32) -> *mut std::ffi::c_void;
            #[link_name = concat!($prefix, "destroy")]
            fn destroy(h: *mut std::ffi::c_void);
            #[link_name = concat!($prefix, "step")]
            fn step(h: *mut std::ffi::c_void, i: *const $in, o: *mut $out);
        }
        $crate::ffi_model::Fns::<$in, $out> {
            in_size,
            out_size,
            create,
            destroy,
            step,
        }
    }};
}

/// One live model.
pub(crate) struct FfiModel<I, O> {
    h: *mut c_void,
    fns: Fns<I, O>,
}

impl<I, O: Default> FfiModel<I, O> {
    /// A model from `fns` whose registers start from `seed` (`--x-initial
    /// unique`); `csrc` names the C file, for the layout error.
    pub(crate) fn new(fns: Fns<I, O>, seed: u32, csrc: &str) -> Result<Self, String> {
        // SAFETY: plain functions of the linked model.
        unsafe {
            if (fns.in_size)() != std::mem::size_of::<I>()
                || (fns.out_size)() != std::mem::size_of::<O>()
            {
                return Err(format!(
                    "port struct layout differs between Rust and {csrc}"
                ));
            }
            let h = (fns.create)(seed);
            if h.is_null() {
                return Err("model creation failed".into());
            }
            Ok(Self { h, fns })
        }
    }

    /// One step of the C side with inputs `i`: the outputs it returns.
    pub(crate) fn step(&mut self, i: &I) -> O {
        let mut o = O::default();
        // SAFETY: `h` is a live model of these functions; the structs match
        // the C layout (checked in `new`).
        unsafe { (self.fns.step)(self.h, i, &mut o) };
        o
    }
}

impl<I, O> Drop for FfiModel<I, O> {
    fn drop(&mut self) {
        // SAFETY: `h` came from this table's `create` and is destroyed once.
        unsafe { (self.fns.destroy)(self.h) }
    }
}
