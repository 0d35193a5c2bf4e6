//! Errors of the verbs layer.

use rnic_device::DeviceError;
use rnic_driver::DriverError;

use crate::qp::{QpAttrMask, QpState};

/// `errno` values [`VerbsError::errno`] maps to (Linux numbering, as
/// libibverbs returns them).
pub mod errno {
    pub const EIO: i32 = 5;
    pub const ENOMEM: i32 = 12;
    pub const EBUSY: i32 = 16;
    pub const EINVAL: i32 = 22;
    pub const EOPNOTSUPP: i32 = 95;
}

/// Everything a verb can fail with. Bad user input is always one of these,
/// never a panic.
#[derive(Debug, thiserror::Error)]
pub enum VerbsError {
    /// The queue layer or the device failed (MMIO, DMA allocation, a
    /// command the NIC refused).
    #[error(transparent)]
    Driver(#[from] DriverError),

    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    #[error("{0} belongs to another device context")]
    ForeignObject(&'static str),

    #[error("{0} is still in use")]
    Busy(&'static str),

    #[error("not supported by this NIC: {0}")]
    Unsupported(String),

    // ---- protection domains and memory regions ----
    #[error("all {0} protection domain numbers are in use")]
    NoPdNumber(u32),

    #[error("invalid access flags {flags:#x}: {reason}")]
    InvalidAccess { flags: u32, reason: &'static str },

    #[error("a memory region cannot have length 0")]
    ZeroLength,

    #[error("range {offset}+{len} is outside the {buf_len}-byte buffer")]
    OutOfRange {
        offset: usize,
        len: usize,
        buf_len: usize,
    },

    #[error("memory region of {0} bytes is larger than the NIC's 4 GiB - 1 limit")]
    TooLong(usize),

    #[error("the MR table is full: the NIC holds {0} memory regions")]
    MrTableFull(u32),

    // ---- queue pairs ----
    #[error("QP {qpn}: {from:?} -> {to:?} is not a valid RC transition")]
    InvalidTransition {
        qpn: u32,
        from: QpState,
        to: QpState,
    },

    #[error("QP {qpn}: {from:?} -> {to:?} needs attributes {missing:?}")]
    MissingAttributes {
        qpn: u32,
        from: QpState,
        to: QpState,
        missing: QpAttrMask,
    },

    #[error("QP {qpn}: {from:?} -> {to:?} does not take attributes {extra:?}")]
    UnexpectedAttributes {
        qpn: u32,
        from: QpState,
        to: QpState,
        extra: QpAttrMask,
    },

    #[error("QP {qpn}: cur_qp_state is {given:?} but the QP is in {actual:?}")]
    CurStateMismatch {
        qpn: u32,
        given: QpState,
        actual: QpState,
    },

    #[error("QP {qpn}: attribute {attr}: {reason}")]
    InvalidAttribute {
        qpn: u32,
        attr: &'static str,
        reason: String,
    },

    #[error("QP {qpn}: the NIC reports state {actual:?} after the change to {wanted:?}")]
    ModifyNotApplied {
        qpn: u32,
        wanted: QpState,
        actual: QpState,
    },

    #[error("QP {qpn}: the NIC reports an unknown QP state {raw}")]
    BadHwState { qpn: u32, raw: u8 },

    #[error("QP {qpn} is in state {state:?}: {op} needs {needed}")]
    WrongState {
        qpn: u32,
        state: QpState,
        op: &'static str,
        needed: &'static str,
    },

    #[error("QP {qpn}: work request with {given} scatter/gather entries, at most {max}")]
    TooManySge { qpn: u32, given: usize, max: u32 },

    #[error("QP {qpn}: invalid work request: {reason}")]
    InvalidWr { qpn: u32, reason: &'static str },

    #[error("send queue of QP {0} is full")]
    SendQueueFull(u32),

    #[error("QP {0} has no receive queue (created with max_recv_wr = 0)")]
    NoRecvQueue(u32),

    #[error("receive queue of QP {0} is full")]
    RecvQueueFull(u32),

    /// A list post stopped at work request `index`; the ones before it were
    /// posted (and the doorbell rung for them), as libibverbs' `bad_wr`.
    #[error("work request {index} of the list: {source}")]
    PostFailed {
        index: usize,
        #[source]
        source: Box<VerbsError>,
    },
}

impl From<DeviceError> for VerbsError {
    fn from(e: DeviceError) -> Self {
        Self::Driver(DriverError::Device(e))
    }
}

impl VerbsError {
    /// The `errno` libibverbs would report for this error.
    pub fn errno(&self) -> i32 {
        use errno::*;
        match self {
            Self::Driver(DriverError::InvalidArg(_)) => EINVAL,
            Self::Driver(DriverError::NoFreeQueue(_))
            | Self::Driver(DriverError::QueueFull(_))
            | Self::Driver(DriverError::RecvQueueFull(_)) => ENOMEM,
            Self::Driver(_) | Self::ModifyNotApplied { .. } | Self::BadHwState { .. } => EIO,
            Self::Busy(_) => EBUSY,
            Self::Unsupported(_) => EOPNOTSUPP,
            Self::NoPdNumber(_)
            | Self::MrTableFull(_)
            | Self::SendQueueFull(_)
            | Self::RecvQueueFull(_) => ENOMEM,
            Self::PostFailed { source, .. } => source.errno(),
            Self::InvalidArgument(_)
            | Self::ForeignObject(_)
            | Self::InvalidAccess { .. }
            | Self::ZeroLength
            | Self::OutOfRange { .. }
            | Self::TooLong(_)
            | Self::InvalidTransition { .. }
            | Self::MissingAttributes { .. }
            | Self::UnexpectedAttributes { .. }
            | Self::CurStateMismatch { .. }
            | Self::InvalidAttribute { .. }
            | Self::WrongState { .. }
            | Self::TooManySge { .. }
            | Self::InvalidWr { .. }
            | Self::NoRecvQueue(_) => EINVAL,
        }
    }
}

pub type Result<T> = std::result::Result<T, VerbsError>;
