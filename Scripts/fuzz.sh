#!/usr/bin/env bash
# Runs the fuzz targets in Tests/Fuzz: each parser of untrusted input, built with libFuzzer and
# AddressSanitizer (swiftc -sanitize=fuzzer,address) from its own source files.
#
#   Scripts/fuzz.sh [SECONDS] [TARGET...]     default: 60 seconds for each of every target
#
# A target is Tests/Fuzz/<Name>Fuzz.swift. Its line "// fuzz-sources: FILE..." lists the project
# files it compiles with (they must need nothing but the standard library and Foundation), and
# Tests/Fuzz/Corpus/<Name>/ holds its seed inputs. New inputs found go to .build/fuzz/corpus/<Name>/,
# crashing inputs to .build/fuzz/findings/. Prints one line of figures per target and exits 1
# if any target found a crash, a leak or a timeout.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
work=.build/fuzz
mkdir -p "$work/bin" "$work/findings"
if [ $# -gt 0 ]; then names=("$@"); else
  names=()
  for f in Tests/Fuzz/*Fuzz.swift; do n=$(basename "$f" .swift); names+=("${n%Fuzz}"); done
fi
failed=0
for name in "${names[@]}"; do
  file=Tests/Fuzz/${name}Fuzz.swift
  [ -f "$file" ] || { echo "fuzz: no target $file" >&2; exit 2; }
  read -r -a sources <<<"$(sed -n 's|^// fuzz-sources: ||p' "$file")"
  log=$work/$name.build.log
  # ld.gold warns about ASan's local symbols; everything else the compiler says is shown.
  if ! swiftc -sanitize=fuzzer,address -parse-as-library -Onone -g -module-name "Fuzz$name" \
       "$file" "${sources[@]}" -o "$work/bin/$name" >"$log" 2>&1; then
    cat "$log"; echo "fuzz: $name: does not build" >&2; exit 2
  fi
  grep -v "Cannot export local symbol" "$log" | grep -E "warning|error" && { echo "fuzz: $name: the build has warnings" >&2; exit 2; }
  corpus=$work/corpus/$name
  seeds=Tests/Fuzz/Corpus/$name
  mkdir -p "$corpus" "$seeds"
  run=$work/$name.run.log
  status=0
  # The Swift backtracer off: under AddressSanitizer it reports its own memory reads as a
  # stack-buffer-underflow on top of the real failure (a precondition), and can hang there.
  SWIFT_BACKTRACE=enable=no "$work/bin/$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$work/findings/$name-" "$corpus" "$seeds" >"$run" 2>&1 || status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$run" | tail -1)
  findings=$(grep -c "^artifact_prefix\|Test unit written to" "$run" || true)
  size=$(find "$corpus" -type f | wc -l)
  echo "fuzz: $name: ${execs:-0} executions in ${seconds} s, corpus ${size} inputs, findings ${findings}"
  if [ "$status" -ne 0 ]; then
    failed=1
    grep -E "ERROR|==[0-9]+==|Fatal error|Test unit written" "$run" | head -20
  fi
done
exit $failed
