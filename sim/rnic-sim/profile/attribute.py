#!/usr/bin/env python3
"""Sum a callgrind profile of a --prof-cfuncs model by Verilog module and
by source line: Verilator names each function after the module and line
its statement came from (..._PROF__<module>__l<line>)."""
import collections
import re
import subprocess
import sys


def main():
    out, top = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 25
    text = subprocess.run(["callgrind_annotate", "--threshold=100", out],
                          capture_output=True, text=True, check=True).stdout
    by_mod, by_line, total = collections.Counter(), collections.Counter(), 0
    for row in text.splitlines():
        m = re.match(r"\s*([\d,]+) \([^)]*\)\s+\S*:(\S+)", row)
        if not m:
            continue
        n, fn = int(m.group(1).replace(",", "")), m.group(2)
        total += n
        p = re.search(r"PROF__(\w+?)__l(\d+)", fn)
        if p:
            by_mod[p.group(1)] += n
            by_line[f"{p.group(1)}.v:{p.group(2)}"] += n
        else:
            by_mod["(scheduler, runtime: " + fn.split("(")[0][-40:] + ")"] += n
    print(f"share of {total:,} instructions, by module")
    for k, v in by_mod.most_common(top):
        print(f"  {100 * v / total:6.2f} %  {k}")
    print("by source line (hw/rtl)")
    for k, v in by_line.most_common(top):
        print(f"  {100 * v / total:6.2f} %  {k}")


if __name__ == "__main__":
    main()
