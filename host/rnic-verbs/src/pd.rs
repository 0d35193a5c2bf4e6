//! Protection domains.

use std::rc::Rc;

use rnic_device::Device;

use crate::context::{Context, Shared};
use crate::error::{Result, VerbsError};

pub(crate) struct PdInner<D: Device> {
    pub(crate) ctx: Rc<Shared<D>>,
    pub(crate) pdn: u16,
}

impl<D: Device> Drop for PdInner<D> {
    fn drop(&mut self) {
        self.ctx.free_pd(self.pdn);
    }
}

/// A protection domain (`ibv_pd`). Memory regions and queue pairs keep it
/// alive; its number is reused only after all of them are gone.
pub struct ProtectionDomain<D: Device> {
    pub(crate) inner: Rc<PdInner<D>>,
}

impl<D: Device> ProtectionDomain<D> {
    pub(crate) fn new(ctx: Rc<Shared<D>>, pdn: u16) -> Self {
        Self {
            inner: Rc::new(PdInner { ctx, pdn }),
        }
    }

    /// The PD number the NIC compares (`qp_pd.pd`, `mr_attr.pd`).
    pub fn pd_num(&self) -> u16 {
        self.inner.pdn
    }

    /// `ibv_dealloc_pd`: fails with [`VerbsError::Busy`] while memory
    /// regions or queue pairs of the PD exist (the PD then lives on until
    /// they are gone).
    pub fn dealloc(self) -> Result<()> {
        if Rc::strong_count(&self.inner) > 1 {
            return Err(VerbsError::Busy("protection domain"));
        }
        Ok(())
    }

    pub(crate) fn check_ctx(&self, ctx: &Context<D>) -> Result<()> {
        if Rc::ptr_eq(&self.inner.ctx, &ctx.shared) {
            Ok(())
        } else {
            Err(VerbsError::ForeignObject("protection domain"))
        }
    }
}

impl<D: Device> std::fmt::Debug for ProtectionDomain<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProtectionDomain")
            .field("pd_num", &self.inner.pdn)
            .finish()
    }
}
