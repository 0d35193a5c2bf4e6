// What the C shims of the Verilator models (sim/rnic-sim, sim/pcie7-shim-sim,
// sim/rtl-blocks-sim) share: a model with its own context, how it is made
// and ended, how its end is reported to Rust, and the word order of the
// generic TLP interface's 128-bit header.

#pragma once

#include <cstdint>
#include <memory>

#include "verilated.h"

// A context whose every register starts from `seed` (`--x-initial unique`,
// randReset(2)); errors are reported (sim_flags), not fatal. The model draws
// its reset values through the thread's context, so it is made current.
inline std::unique_ptr<VerilatedContext> new_context(uint32_t seed, bool trace) {
    std::unique_ptr<VerilatedContext> ctx(new VerilatedContext);
    ctx->randReset(2);
    // randSeed 0 would mean "seed from the system clock": never pass it.
    ctx->randSeed(seed == 0 ? 1 : static_cast<int>(seed));
    if (trace) ctx->traceEverOn(true);
    ctx->fatalOnError(false);
    Verilated::threadContextp(ctx.get());
    return ctx;
}

// A model and the context it lives in. Each call into a model makes its
// context the thread's current one first (enter): Rust may drive several
// models, on any thread.
template <class Model>
struct VlSim {
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<Model> top;

    void enter() const { Verilated::threadContextp(ctx.get()); }
};

// A new model named `name`, its registers drawn from `seed`, clock low.
template <class Sim, class Model = typename decltype(Sim::top)::element_type>
Sim* vl_sim_create(uint32_t seed, bool trace, const char* name) {
    Sim* s = new Sim;
    s->ctx = new_context(seed, trace);
    s->top.reset(new Model(s->ctx.get(), name));
    return s;
}

// Runs the model's final blocks and frees it (null: nothing to do).
template <class Sim>
void vl_sim_destroy(Sim* s) {
    if (!s) return;
    s->enter();
    s->top->final();
    s->top.reset();
    s->ctx.reset();
    delete s;
}

// Bit 0: $finish reached, bit 1: an error ($error, assertion).
inline uint8_t sim_flags(const VerilatedContext& ctx) {
    return static_cast<uint8_t>((ctx.gotFinish() ? 1 : 0) | (ctx.gotError() ? 2 : 0));
}

// The TLP header: array index = DW number (DW0 first, as on the wire), while
// Verilator's word 0 holds bits 31:0 of the port, which is DW3.
inline void put_hdr(VlWide<4>& d, const uint32_t* s) {
    d[3] = s[0];
    d[2] = s[1];
    d[1] = s[2];
    d[0] = s[3];
}

inline void get_hdr(const VlWide<4>& d, uint32_t* s) {
    s[0] = d[3];
    s[1] = d[2];
    s[2] = d[1];
    s[3] = d[0];
}
