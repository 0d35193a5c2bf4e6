#!/usr/bin/env bash
# Bounded model checking of rnic's completion ordering (issue 21, part 1).
# See hw/formal/README.md for what is proven, under which assumptions and
# to which depth.
#
# Each job builds a harness (hw/formal/formal_*.v around the real RTL) with
# yosys into an AIGER model and an SMT-LIB2 model of the same netlist, and:
#   prove   ABC's bmc3 (yosys-abc, shipped with yosys) unrolls it DEPTH
#           cycles from reset: no assertion fails in any of them
#   induct  yosys-smtbmc k-induction with k=DEPTH (base case and step):
#           the assertions hold in every reachable state
#   cover   the harness's reachability target (built with COVER_CHECK,
#           where it is an assertion that must fail) is reached within
#           DEPTH: the bound covers the complete messages it claims (two
#           for the responder, one send WQE with its ACK for the requester)
#   break   with a debug break switch forced on, an assertion MUST fail
#           within DEPTH. A check that passes with a break switch on is
#           broken, so that fails the run.
# Every counterexample ABC finds is replayed on the netlist it came from by
# Yosys's simulator (`sim -r`), which must see an assertion fail in the same
# cycle, the expected one for a break job, and no assumption broken; the
# trace is written as target/formal/<job>.vcd. The harnesses' free inputs
# ($anyseq) are made ports (`expose -input`) so that the witness names
# them. ENGINE=smtbmc runs prove jobs with yosys-smtbmc alone instead
# (slower: see the README's figures); REPLAY=smtbmc replays with
# yosys-smtbmc and Yices.
#
# Usage: hw/formal/run.sh [JOB...]     (from anywhere; default: every job)
# Env:   ENGINE   abc (default) or smtbmc, for prove jobs
#        SOLVER   yosys-smtbmc solver (default yices; z3 works, slower)
#        REPLAY   sim (default) or smtbmc: what replays counterexamples
#        BUILD_ONLY   set: only build the models
#        FORMAL_JOBS  jobs at once (default: every core)
#        YOSYS, YOSYS_ABC, YOSYS_SMTBMC   binaries (default from PATH)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

ENGINE="${ENGINE:-abc}"
SOLVER="${SOLVER:-yices}"
YOSYS="${YOSYS:-yosys}"
YOSYS_ABC="${YOSYS_ABC:-yosys-abc}"
YOSYS_SMTBMC="${YOSYS_SMTBMC:-yosys-smtbmc}"
OUT=target/formal
mkdir -p "$OUT"

RTL=(hw/rtl/priority_encoder.v hw/rtl/arbiter.v hw/rtl/axis_register.v hw/rtl/axis_arb_mux.v
    hw/rtl/ram_snoop_capture.v hw/rtl/ram_sdp.v hw/rtl/ram_sdp_copies.v hw/rtl/ram_rec.v hw/rtl/rec_map.v hw/rtl/rec_port.v hw/rtl/ram_reset_sweep.v hw/rtl/responder.v hw/rtl/cqe_writer.v hw/rtl/dma_wr_engine.v
    hw/rtl/dma_rd_engine.v hw/rtl/dma_ram.v hw/rtl/rnic_dma.v hw/rtl/requester.v hw/rtl/completer.v hw/rtl/path_active.v hw/rtl/path_pick.v hw/rtl/path_health.v
    hw/rtl/cq_manager.v hw/rtl/tag_match.v hw/rtl/queue_manager.v hw/rtl/slot_allocator.v hw/rtl/mp_window.v hw/rtl/rc_message.v hw/rtl/mp_deferred.v)
HARNESS=(hw/formal/formal_responder.v hw/formal/formal_order.v hw/formal/formal_cqe_writer.v
    hw/formal/formal_requester.v hw/formal/formal_queue_manager.v hw/formal/formal_cq_manager.v)

# name|top|defines|kind|depth|expect. For break jobs, expect names the
# assertions (their trailing // tag in the source, alternatives a|b) one of
# which must be the one that fails. Depths: as deep as fits the CI budget
# (the README has the measured times per job).
JOBS_ALL=(
    "cw_induct|formal_cqe_writer||induct|4"
    "cw_cqe_ro|formal_cqe_writer|BREAK_CQE_RO|break|20|f_ro_flushed|f_ro_inv"
    "cw_bypass|formal_cqe_writer|BREAK_BYPASS|break|20|f_no_bypass"
    "resp_rc|formal_responder||prove|40"
    "resp_rc_reach|formal_responder|COVER_CHECK|cover|40"
    "resp_rc_early_cqe|formal_responder|BREAK_EARLY_CQE|break|40|f_barrier"
    "resp_mp|formal_responder|MP_ONLY|prove|36"
    "resp_loads|formal_responder|RESP_LOADS|prove|24"
    "resp_rfl_stamp|formal_responder|FORMAL_BREAK_RFL_STAMP|break|24|f_rfl_scan"
    "resp_rfl_load|formal_responder|RESP_LOADS FORMAL_BREAK_RFL_LOAD|break|24|f_rfl_qp|f_rfl_scan"
    "resp_mp_reach|formal_responder|MP_ONLY COVER_CHECK|cover|36"
    "resp_mp_early_cqe|formal_responder|MP_ONLY BREAK_EARLY_CQE|break|36|f_barrier|f_mp_point"
    "back|formal_order|RESP_ENV CQE_WRITER_ASSERTS_OFF|prove|16"
    "back_cqe_ro|formal_order|RESP_ENV CQE_WRITER_ASSERTS_OFF BREAK_CQE_RO|break|16|A[23]"
    "back_bypass|formal_order|RESP_ENV CQE_WRITER_ASSERTS_OFF BREAK_BYPASS|break|16|A1"
    "e2e|formal_order|CQE_WRITER_ASSERTS_OFF|prove|28"
    "e2e_early_cqe|formal_order|CQE_WRITER_ASSERTS_OFF BREAK_EARLY_CQE|break|28|A1|f_barrier"
    "e2e_bypass|formal_order|CQE_WRITER_ASSERTS_OFF BREAK_BYPASS|break|28|A1"
    "e2e_cqe_ro|formal_order|CQE_WRITER_ASSERTS_OFF BREAK_CQE_RO|break|28|A[23]"
    "req|formal_requester||prove|21"
    "req_reach|formal_requester|COVER_CHECK|cover|21"
    "req_early_send_cqe|formal_requester|FORMAL_BREAK_EARLY_SEND_CQE|break|21|f_send_acked"
    "qm|formal_queue_manager||prove|18"
    "qm_list_twice|formal_queue_manager|FORMAL_BREAK_LIST|break|18|f_list"
    "cq|formal_cq_manager||prove|16"
    "cq_disarm|formal_cq_manager|FORMAL_BREAK_CQ_DISARM|break|16|f_cq_view|f_cq_msi"
)

log() { echo "formal: $*"; }

# build TAG TOP DEFINES: $OUT/TAG.{aig,aim,smt2}
build() {
    local tag="$1" top="$2" defs="$3" d dflags=""
    for d in $defs; do dflags+=" -D$d"; done
    "$YOSYS" -q -l "$OUT/$tag.yosys.log" -p "
        read_verilog -formal -sv$dflags -Ihw/rtl -Ihw/rtl/generated ${RTL[*]} ${HARNESS[*]}
        prep -top $top
        flatten
        memory_nordff
        memory_map
        async2sync
        chformal -cover -remove
        setundef -undriven -anyseq
        expose -input t:\$anyseq %co t:\$anyseq %d
        opt -keepdc
        setattr -unset keep
        delete -output
        opt -full
        techmap
        opt -fast
        dffunmap
        abc -g AND -fast
        opt_clean
        check -assert
        write_aiger -I -B -zinit -map $OUT/$tag.aim $OUT/$tag.aig
        write_smt2 -wires $OUT/$tag.smt2
        chformal -assume2assert
        write_rtlil $OUT/$tag.il" >/dev/null || { tail -20 "$OUT/$tag.yosys.log" >&2; return 1; }
    if grep -q '^Warning:' "$OUT/$tag.yosys.log"; then
        grep '^Warning:' "$OUT/$tag.yosys.log" | sort -u >&2
        log "$tag: yosys warnings (a harness must build clean)" >&2
        return 1
    fi
}

# bmc TAG DEPTH: ABC bmc3; prints "pass" or the failing frame
bmc() {
    local tag="$1" depth="$2" out
    rm -f "$OUT/$tag.aiw"
    out=$("$YOSYS_ABC" -c "read_aiger $OUT/$tag.aig; fold; strash; bmc3 -F $depth; write_cex -a $OUT/$tag.aiw" 2>&1)
    echo "$out" >"$OUT/$tag.abc.log"
    if grep -q "was asserted in frame" <<<"$out"; then
        sed -n 's/.*was asserted in frame \([0-9]*\).*/\1/p' <<<"$out" | head -1
    elif grep -q "No output asserted in $depth frames" <<<"$out"; then
        echo pass
    else
        echo "$out" >&2
        echo error
    fi
}

# source_line WHERE: a yosys source attribute ("a.v:1.2-3.4|b.v:5.6-7.8",
# the hierarchy of a flattened cell) as "file:line: text" of the innermost
# location; its end line is the assertion's (the start may be the end of the
# statement before)
source_line() {
    local loc file line
    loc=$(tr '|' '\n' <<<"$1" | tail -1)
    file=${loc%%:*}
    line=${loc##*-}
    line=${line%%.*}
    echo "$file:$line: $(sed -n "${line}p" "$file" | sed 's/^ *//')"
}

# replay TAG FRAME: the ABC counterexample run through the netlist ABC was
# given, by Yosys's own simulator (`sim -r` with the AIGER witness; VCD in
# $OUT/TAG.vcd). Prints one "file:line: text" line per assertion that fails
# in the first failing cycle, which must be FRAME. The netlist it simulates
# has its assumptions turned into assertions: a trace that breaks one is
# not a counterexample and fails the replay. REPLAY=smtbmc replays with
# yosys-smtbmc and Yices instead (the same checks, minutes instead of
# seconds on the responder's reach jobs: see the README).
replay() {
    local tag="$1" frame="$2" fails first
    if [ "${REPLAY:-sim}" = smtbmc ]; then
        "$YOSYS_SMTBMC" -s "$SOLVER" --aig-noheader --aig "$OUT/$tag.aim:$OUT/$tag.aiw" \
            --dump-vcd "$OUT/$tag.vcd" "$OUT/$tag.smt2" >"$OUT/$tag.replay.log" 2>&1 || true
        fails=$(sed -n 's/.*Assert failed in [^:]*: \(.*\) (.*/\1/p' "$OUT/$tag.replay.log" | head -1)
        [ -n "$fails" ] || {
            echo "yosys-smtbmc: no assertion fails on the trace under the assumptions" \
                "($(tail -1 "$OUT/$tag.replay.log" | sed 's/^[# 0-9:]*//'))" >&2
            return 1
        }
        source_line "$fails"
        return 0
    fi
    "$YOSYS" -q -l "$OUT/$tag.replay.log" -p "read_rtlil $OUT/$tag.il
        sim -zinit -clock clk -r $OUT/$tag.aiw -map $OUT/$tag.aim -vcd $OUT/$tag.vcd" >/dev/null 2>&1 || {
        tail -5 "$OUT/$tag.replay.log" >&2
        return 1
    }
    # "cycle name (where)" of every failure, in the order simulated
    fails=$(awk '/^Simulating cycle / { c = $3 + 0 }
        /^Warning: Assert .* failed\.$/ { sub(/^Warning: Assert /, ""); sub(/ failed\.$/, ""); print c " " $0 }' \
        "$OUT/$tag.replay.log" | awk '!seen[$0]++')
    [ -n "$fails" ] || { echo "the trace fails no assertion in simulation" >&2; return 1; }
    if grep -q '\$assume\$' <<<"$fails"; then
        echo "the trace breaks an assumption in cycle $(grep -m1 '\$assume\$' <<<"$fails" | cut -d' ' -f1):" \
            "$(source_line "$(grep -m1 '\$assume\$' <<<"$fails" | sed 's/.*(\(.*\))$/\1/')")" >&2
        return 1
    fi
    first=${fails%% *}
    if [ "$first" != "$frame" ]; then
        echo "the first failure in simulation is in cycle $first, ABC's in $frame" >&2
        return 1
    fi
    fails=$(awk -v c="$first" '$1 == c' <<<"$fails")
    while read -r _ _ where; do
        source_line "${where:1:-1}"
    done <<<"$fails"
}

run_job() {
    local spec="$1" name top defs kind depth expect t0 res what
    IFS='|' read -r name top defs kind depth expect <<<"$spec"
    # (expect may hold several alternatives, a|b: the rest of the line)
    expect=$(cut -d'|' -f6- <<<"$spec")
    t0=$SECONDS
    build "$name" "$top" "$defs" || return 1
    [ -z "${BUILD_ONLY:-}" ] || { log "$name: built ($OUT/$name.aig)"; return 0; }
    case "$kind" in
        prove)
            if [ "$ENGINE" = smtbmc ]; then
                if "$YOSYS_SMTBMC" -s "$SOLVER" -t "$depth" --dump-vcd "$OUT/$name.vcd" "$OUT/$name.smt2" \
                    >"$OUT/$name.smtbmc.log" 2>&1; then
                    log "$name: PROVEN to depth $depth by yosys-smtbmc ($((SECONDS - t0)) s)"
                    return 0
                fi
                grep 'Assert failed' "$OUT/$name.smtbmc.log" >&2 || tail -5 "$OUT/$name.smtbmc.log" >&2
                log "$name: FAILED (yosys-smtbmc; trace $OUT/$name.vcd)" >&2
                return 1
            fi
            res=$(bmc "$name" "$depth")
            if [ "$res" = pass ]; then
                log "$name: PROVEN to depth $depth (no assertion fails in $depth cycles from reset; $((SECONDS - t0)) s)"
                return 0
            fi
            [ "$res" = error ] && { log "$name: ABC error" >&2; return 1; }
            what=$(replay "$name" "$res") || what="(replay failed)"
            log "$name: FAILED at cycle $res: ${what//$'\n'/; } (trace $OUT/$name.vcd)" >&2
            return 1
            ;;
        induct)
            # k-induction by yosys-smtbmc: base case (no failure in the
            # first DEPTH cycles) and induction step (DEPTH good cycles
            # are always followed by a good one): every reachable state
            if ! "$YOSYS_SMTBMC" -s "$SOLVER" -t "$depth" --dump-vcd "$OUT/$name.vcd" "$OUT/$name.smt2" \
                >"$OUT/$name.base.log" 2>&1; then
                grep 'Assert failed' "$OUT/$name.base.log" >&2 || tail -5 "$OUT/$name.base.log" >&2
                log "$name: FAILED in the base case (trace $OUT/$name.vcd)" >&2
                return 1
            fi
            if ! "$YOSYS_SMTBMC" -s "$SOLVER" -i -t "$depth" "$OUT/$name.smt2" >"$OUT/$name.smtbmc.log" 2>&1; then
                tail -3 "$OUT/$name.smtbmc.log" >&2
                log "$name: induction did not succeed at k=$depth" >&2
                return 1
            fi
            log "$name: PROVEN for all depths by k-induction, k=$depth (yosys-smtbmc -i; $((SECONDS - t0)) s)"
            ;;
        cover)
            res=$(bmc "$name" "$depth")
            case "$res" in
                pass | error)
                    log "$name: target NOT reached within $depth cycles: the bound is too short" >&2
                    return 1 ;;
            esac
            what=$(replay "$name" "$res") || { log "$name: replay failed" >&2; return 1; }
            # the target alone: any other assertion failing is a bug on the way
            if grep -vq 'f_reach' <<<"$what"; then
                log "$name: an assertion failed on the way: ${what//$'\n'/; } (trace $OUT/$name.vcd)" >&2
                return 1
            fi
            log "$name: reachability target reached at cycle $res of $depth ($((SECONDS - t0)) s; trace $OUT/$name.vcd)"
            ;;
        break)
            res=$(bmc "$name" "$depth")
            case "$res" in
                pass)
                    log "$name: NO counterexample within $depth cycles with the switch on: the check is broken" >&2
                    return 1 ;;
                error) log "$name: ABC error (log: $OUT/$name.abc.log)" >&2; return 1 ;;
            esac
            what=$(replay "$name" "$res") || { log "$name: counterexample not confirmed by the replay" >&2; return 1; }
            if [ -n "$expect" ]; then
                # one of the assertions failing in that cycle is the expected one
                grep -Eq -- "// ($expect)\$" <<<"$what" || {
                    log "$name: failed, but not on $expect: ${what//$'\n'/; }" >&2
                    return 1
                }
                what=$(grep -Em1 -- "// ($expect)\$" <<<"$what")
            fi
            log "$name: counterexample at cycle $res, as required: $what ($((SECONDS - t0)) s; trace $OUT/$name.vcd)"
            ;;
        *) log "unknown job kind $kind" >&2; return 1 ;;
    esac
}

# The replay must be able to refuse a trace: qm_list_twice's counterexample
# with every input of its first cycle set to 1 (the queue manager's harness
# assumes one register write per cycle, which that breaks) must fail it.
replay_selftest() {
    local t=replay_selftest
    cp "$OUT/qm_list_twice.il" "$OUT/$t.il"
    cp "$OUT/qm_list_twice.aim" "$OUT/$t.aim"
    cp "$OUT/qm_list_twice.smt2" "$OUT/$t.smt2"
    awk 'NR == 3 { s = substr($0, 1, 1); for (i = 2; i <= length($0); i++) s = s "1"; $0 = s } { print }' \
        "$OUT/qm_list_twice.aiw" >"$OUT/$t.aiw"
    local frame
    frame=$(sed -n 's/.*was asserted in frame \([0-9]*\).*/\1/p' "$OUT/qm_list_twice.abc.log" | head -1)
    if replay "$t" "$frame" >/dev/null 2>&1; then
        log "replay self-test: a trace that breaks the harness's assumptions was accepted" >&2
        return 1
    fi
    log "replay self-test: a corrupted trace is refused ($(replay "$t" "$frame" 2>&1 >/dev/null | head -1))"
}

want=("$@")
status=0
start=$SECONDS
# The jobs are independent single-threaded solver runs: FORMAL_JOBS of them
# at once (default: every core), their lines printed in the table's order.
# They start longest first (seconds from the CI run of 2026-12-07, beside
# the synthesis; a job not listed starts last), so that the cores end
# together: in the table's order `cq` (66 s) started last and ran alone,
# and the step took 500 s for 943 s of jobs on two cores.
declare -A COST=([resp_mp]=104 [resp_rc]=95 [e2e]=68 [cq]=66 [resp_mp_reach]=59 [req]=56
    [resp_rc_reach]=55 [back]=55 [e2e_cqe_ro]=51 [req_reach]=38 [req_early_send_cqe]=37
    [resp_loads]=30 [back_cqe_ro]=29 [e2e_early_cqe]=27 [e2e_bypass]=27 [resp_rfl_stamp]=24
    [resp_rfl_load]=23 [resp_mp_early_cqe]=20 [qm]=20 [resp_rc_early_cqe]=19 [back_bypass]=19
    [qm_list_twice]=5 [cw_bypass]=5 [cw_induct]=4 [cq_disarm]=4 [cw_cqe_ro]=3)
jobs_max="${FORMAL_JOBS:-$(nproc)}"
ran=()
declare -A spec_of
for spec in "${JOBS_ALL[@]}"; do
    name=${spec%%|*}
    if [ ${#want[@]} -gt 0 ] && ! printf '%s\n' "${want[@]}" | grep -qx "$name"; then continue; fi
    ran+=("$name")
    spec_of[$name]=$spec
done
for name in $(for n in "${ran[@]}"; do echo "${COST[$n]:-0} $n"; done | sort -s -k1,1nr | cut -d' ' -f2); do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
    rm -f "$OUT/$name.rc"
    ( rc=0; run_job "${spec_of[$name]}" >"$OUT/$name.run" 2>&1 || rc=$?; echo "$rc" >"$OUT/$name.rc" ) &
done
wait
for name in "${ran[@]}"; do
    cat "$OUT/$name.run"
    [ "$(cat "$OUT/$name.rc" 2>/dev/null)" = 0 ] || status=1
done
[ ${#ran[@]} -gt 0 ] || { log "no job named ${want[*]}" >&2; status=1; }
if [ -z "${BUILD_ONLY:-}" ] && printf '%s\n' "${ran[@]}" | grep -qx qm_list_twice &&
    [ "$(cat "$OUT/qm_list_twice.rc")" = 0 ]; then
    replay_selftest || status=1
fi
log "done in $((SECONDS - start)) s ($jobs_max at once)"
exit "$status"
