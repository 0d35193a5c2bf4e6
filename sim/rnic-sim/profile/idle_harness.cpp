// A bare rnic_core clocked with its inputs idle, for profile_model.sh: no
// shim, no host model, so an instruction count is the model's alone.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "Vrnic_core.h"
#include "verilated.h"

int main(int argc, char** argv) {
    const long cycles = argc > 1 ? std::atol(argv[1]) : 300000;
    VerilatedContext ctx;
    Vrnic_core m(&ctx);
    m.rst = 1;
    for (int i = 0; i < 20; i++) {
        m.clk = 0;
        m.eval();
        m.clk = 1;
        m.eval();
    }
    m.rst = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < cycles; i++) {
        m.clk = 0;
        m.eval();
        m.clk = 1;
        m.eval();
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%ld idle cycles, %.0f kcycles/s (wall clock, machine-dependent)\n", cycles,
                cycles / s / 1e3);
    return 0;
}
