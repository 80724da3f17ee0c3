#!/usr/bin/env bash
# The seed queue (experiments/seeds/queue.txt): more seeds for every chosen-rate curve of
# the training figures, one resumable ntk-train sweep per line, in the queue's order. Each
# line's runs train into runs/seeds/<name> (skipped when finished by the same config,
# continued when interrupted: rerun this script after a stop), and each finished run's
# files (config.toml, metrics.csv, ntk.csv, representations.csv, summary.json) are copied
# into <experiment dir>/runs/<id>/ (each dir of the line's list), beside the committed seed,
# for `ntk-train collect`.
#
#   bash experiments/seeds/run.sh              # the whole queue, one thread (beside other work)
#   SEEDS_THREADS=2 bash experiments/seeds/run.sh
#   SEEDS_ONLY=agarwal_fig7_d4 bash experiments/seeds/run.sh   # one line
#   SEEDS_ONLY='edge_*,fresh_fig3_*' bash experiments/seeds/run.sh   # lines by name pattern
#   SEEDS_EXPORT_ONLY=1 bash experiments/seeds/run.sh          # copy what has finished, train nothing
#
# A session's machine does not outlive it: before it ends, `bash experiments/seeds/park.sh
# save` packs the unfinished runs (their current checkpoint) into experiments/seeds/parked/
# to be committed, and this script restores them on the next machine before training; the
# finished runs a line exported come back from their export (restore_exported).
#
# Then, per experiment: cargo run -p ntk-train -- collect <experiment dir> [--log].
set -euo pipefail
# A relative NTK_TRAIN_BIN is the caller's, read before the cd below (eighty-second
# hostile round, N4: `NTK_TRAIN_BIN=bin/ntk-train` from another directory was not found).
case "${NTK_TRAIN_BIN:-}" in
'' | /*) ;;
*) NTK_TRAIN_BIN="$PWD/$NTK_TRAIN_BIN" ;;
esac
cd "$(dirname "$0")/../.."
# shellcheck source=experiments/seeds/links.sh
source experiments/seeds/links.sh

threads="${SEEDS_THREADS:-1}"
# A count, or both libraries would ignore it without a word (ninth hostile round, Q06).
if [[ ! "$threads" =~ ^[0-9]+$ || "$threads" =~ ^0+$ ]]; then
    echo "seeds: SEEDS_THREADS=$threads: expected a count of threads, 1 or more" >&2
    exit 2
fi
export RAYON_NUM_THREADS="$threads" OPENBLAS_NUM_THREADS="$threads"
bin="${NTK_TRAIN_BIN:-${CARGO_TARGET_DIR:-target}/debug/ntk-train}"
if [ -z "${SEEDS_EXPORT_ONLY:-}" ] && [ ! -x "$bin" ]; then
    echo "seeds: $bin not found: cargo build -p ntk-train first (or set NTK_TRAIN_BIN)" >&2
    exit 2
fi
# A count the tool refuses (beyond 64 threads a CPU) would fail every line and end the queue
# with 0 (tenth hostile round): asked of the tool itself, which refuses it first thing.
if [ -z "${SEEDS_EXPORT_ONLY:-}" ] && ! refusal=$("$bin" --version 2>&1 >/dev/null); then
    echo "seeds: $bin refuses to start with SEEDS_THREADS=$threads (its RAYON_NUM_THREADS and OPENBLAS_NUM_THREADS): ${refusal#error: }" >&2
    exit 2
fi

# What path $1, which exists and is not a directory, is.
kind_of() {
    if [ -f "$1" ]; then
        echo "a regular file"
    elif [ -p "$1" ]; then
        echo "a named pipe (FIFO)"
    elif [ -S "$1" ]; then
        echo "a socket"
    elif [ -b "$1" ] || [ -c "$1" ]; then
        echo "a device"
    else
        echo "not a directory"
    fi
}

# Copies the finished runs of runs/seeds/$1 into $2/runs (a run's own files only: no
# checkpoints, no locks). A run directory there holding other files under these names (a
# committed run of the same id made by another config or another time), a symbolic link, or
# anything else that is not a directory (a file), is not replaced: said, counted, and the
# queue ends with status 1 (eleventh hostile round: an export overwrote a committed 5-epoch
# run with the queue's 2-epoch one without a word; seventy-third, D2: a regular file there
# ended the whole queue at mkdir, no later line run, no summary). Nor is anything written
# through a symbolic link above it (at runs/, at the experiment directory or higher: D3),
# nor where its directory cannot be made: said and counted the same, and the queue goes on.
# Files equal to the run's (an earlier export of it) are left as they are. Each file is
# copied through a new temporary file of its own (.<file>.seeds-tmp.XXXXXX, made by mktemp):
# nothing there at any other name is touched.
exports_refused=0
lines_failed=0
export_runs() {
    local from="runs/seeds/$1/runs" to="$2/runs"
    [ -d "$from" ] || return 0
    for run in "$from"/*/; do
        run="${run%/}"
        [ -f "$run/summary.json" ] || continue
        local id dest f why link clash=""
        id="$(basename "$run")"
        dest="$to/$id"
        link="$(first_link "$dest")"
        if [ -L "$dest" ]; then
            clash="is a symbolic link"
        elif [ -n "$link" ]; then
            echo "seeds: $dest: $link is a symbolic link (to $(readlink "$link")), never written through here: not exported; make $link a directory of its own to export this line's run there" >&2
            exports_refused=$((exports_refused + 1))
            continue
        elif [ -e "$dest" ] && [ ! -d "$dest" ]; then
            clash="is $(kind_of "$dest"), not a run directory"
        else
            for f in config.toml metrics.csv ntk.csv representations.csv predicted.csv predicted_spectrum.csv summary.json; do
                if [ -f "$run/$f" ] && { [ -L "$dest/$f" ] || { [ -e "$dest/$f" ] && ! cmp -s "$run/$f" "$dest/$f"; }; }; then
                    clash="holds a $f that is not runs/seeds/$1's (a run of the same id made otherwise?)"
                    break
                fi
            done
        fi
        if [ -n "$clash" ]; then
            echo "seeds: $dest $clash: not replaced; move it away to export this line's run there" >&2
            exports_refused=$((exports_refused + 1))
            continue
        fi
        # A new entry of the experiment's runs/ is asked of ntk-train first, as one run
        # brought into a collected sweep is (its dry run): a run of the same point and seed
        # there already would be counted twice by the collect (twenty-second hostile round,
        # D2: exported, and collect.sh then refused the directory).
        # Only the dry run's refusals of a duplicate stop the export: one it cannot give
        # (no tool built, the data set not on this machine: an export copies files and needs
        # neither, twenty-third hostile round, D6) leaves the check to collect.sh.
        if [ ! -e "$dest" ] && ! why="$("$bin" run --config "$run/config.toml" --out "$dest" --dry-run 2>&1 >/dev/null)"; then
            case "$why" in
            *"records this point and seed already"* | *"records this config already"* | *"are one point and seed"* | *"another process is writing this sweep"*)
                echo "seeds: $dest: not exported: ${why#error: }" >&2
                exports_refused=$((exports_refused + 1))
                continue
                ;;
            *)
                echo "seeds: $dest: exported without the duplicate check (its dry run could not run: ${why#error: }); collect.sh checks it" >&2
                ;;
            esac
        fi
        # A failure here is said and counted, never the end of the queue (`set -e`: D2).
        if ! mkdir -p "$dest" 2>/dev/null; then
            echo "seeds: $dest: cannot be made here (a file in its way?): not exported" >&2
            exports_refused=$((exports_refused + 1))
            continue
        fi
        # Each file is copied through a temporary file of its own, new (mktemp makes it, never
        # an existing name), then moved into place: a user's file at a fixed copy name was
        # overwritten and moved in as the run's (issue 65, round 74 D1).
        local copied=1 tmp
        for f in config.toml metrics.csv ntk.csv representations.csv predicted.csv predicted_spectrum.csv summary.json; do
            [ -f "$run/$f" ] || continue
            if ! tmp="$(mktemp "$dest/.$f.seeds-tmp.XXXXXX")"; then
                copied=""
                break
            fi
            if ! { cp -p "$run/$f" "$tmp" && mv "$tmp" "$dest/$f"; }; then
                rm -f "$tmp"
                copied=""
                break
            fi
        done
        if [ -z "$copied" ]; then
            echo "seeds: $dest: its $f could not be copied (see above): exported in part; export it again once it can be copied" >&2
            exports_refused=$((exports_refused + 1))
            continue
        fi
        echo "seeds: $dest"
    done
}

# The finished runs of line $1 (config $2, the sweep's --set words in args) that an earlier
# machine exported into the line's experiment directories (the list $3) and this machine's
# runs/seeds/$1 lacks (runs/ is not committed): copied back before the sweep, so that it
# keeps them instead of training them again from epoch 0 (a new machine trained depth 8's
# two finished 500-epoch seeds again, about two hours each). Only a run the sweep plans and
# finds new is copied, only its own files, never over anything there; one the sweep's dry
# run then does not take as finished by this config is removed again, said, and trained.
# Nothing is read or written through a symbolic link among the components of the export or
# of runs/seeds/$1/runs/<id> (seventy-third hostile round, D3): passed over, said.
restore_exported() {
    local out="runs/seeds/$1" listing id d src f from link exports="" restored=()
    local -a ds
    IFS=',' read -ra ds <<< "$3"
    for d in "${ds[@]}"; do
        if [ -d "$(trim "$d")/runs" ]; then exports=1; fi
    done
    [ -n "$exports" ] || return 0
    listing="$("$bin" sweep --config "$2" --out "$out" --resume "${args[@]}" --dry-run 2>/dev/null)" || true
    for id in $(awk '$2 == "new" { print $NF }' <<< "$listing"); do
        [ ! -e "$out/runs/$id" ] && [ ! -L "$out/runs/$id" ] || continue
        link="$(first_link "$out/runs/$id" runs)"
        if [ -n "$link" ]; then
            echo "seeds: $out/runs/$id: $link is a symbolic link, never written through here: not restored from an export" >&2
            continue
        fi
        for d in "${ds[@]}"; do
            src="$(trim "$d")/runs/$id"
            link="$(first_link "$src")"
            if [ -n "$link" ] && { [ -e "$src" ] || [ -L "$src" ]; }; then
                echo "seeds: $src: $link is a symbolic link, never read through here: not restored from it" >&2
                continue
            fi
            if [ -n "$link" ] || [ ! -f "$src/summary.json" ]; then continue; fi
            if ! mkdir -p "$out/runs/$id" 2>/dev/null; then
                echo "seeds: $out/runs/$id: cannot be made here (a file in its way?): not restored from an export" >&2
                break
            fi
            for f in config.toml metrics.csv ntk.csv representations.csv predicted.csv predicted_spectrum.csv summary.json; do
                if [ -f "$src/$f" ] && [ ! -L "$src/$f" ]; then cp -p "$src/$f" "$out/runs/$id/$f"; fi
            done
            restored+=("$id:$src")
            break
        done
    done
    [ "${#restored[@]}" -gt 0 ] || return 0
    listing="$("$bin" sweep --config "$2" --out "$out" --resume "${args[@]}" --dry-run 2>/dev/null)" || true
    for id in "${restored[@]}"; do
        from="${id#*:}"
        id="${id%%:*}"
        if awk -v id="$id" '$NF == id && $2 == "done" { found = 1 } END { exit !found }' <<< "$listing"; then
            echo "seeds: $out/runs/$id: finished; restored from its export $from"
        else
            rm -rf "${out:?}/runs/${id:?}"
            echo "seeds: $out/runs/$id: the export $from is not this line's finished run: not restored; it is trained" >&2
        fi
    done
}

trim() { local v="$1"; v="${v#"${v%%[![:space:]]*}"}"; echo "${v%"${v##*[![:space:]]}"}"; }
queue=experiments/seeds/queue.txt
# Each name is its line's own directory, runs/seeds/<name>: a plain name (letters, digits,
# . _ -; not . or ..), once in the queue. A name given twice put two configs' runs in one
# directory, and the second line, refused there, then exported the first's runs into its
# own experiment's runs/; a name with a / or .. trained outside runs/seeds (ninth hostile
# round). Checked before any training.
# Each experiment directory a line lists is there already (a committed experiment's): a
# misspelt one was made by the export, and the experiment never got its seeds, with "queue
# done" and status 0 (eighty-second hostile round, D4).
# A line without its config or its experiment directories (`l5 | experiments/e1.toml`)
# trained and exported nothing, "queue done", status 0 (ninety-fifth hostile round, D3).
seen=" "
while IFS='|' read -r name config dirs _ || [ -n "$name" ]; do
    name="$(trim "$name")"
    case "$name" in '' | '#'*) continue ;; esac
    if [ -z "$(trim "$config")" ] || [ -z "$(trim "$dirs")" ]; then
        echo "seeds: $queue: line '$name': no config or no experiment directory: a line is 'name | config | experiment dir[, ...] | --set words'; nothing trained" >&2
        exit 2
    fi
    # Its config too, before any line trains (ninety-sixth hostile round, N1: the earlier
    # lines trained and exported first).
    if [ ! -f "$(trim "$config")" ]; then
        echo "seeds: $queue: line '$name': the config '$(trim "$config")' is not a file; nothing trained" >&2
        exit 2
    fi
    if [[ ! "$name" =~ ^[A-Za-z0-9._-]+$ ]] || [ "$name" = . ] || [ "$name" = .. ]; then
        echo "seeds: $queue: line name '$name': a plain name of letters, digits, . _ - (it names runs/seeds/<name>)" >&2
        exit 2
    fi
    if [[ "$seen" == *" $name "* ]]; then
        echo "seeds: $queue: the name '$name' is given to two lines; each line needs its own (runs/seeds/<name>)" >&2
        exit 2
    fi
    seen+="$name "
    IFS=',' read -ra listed <<< "$dirs"
    # `read -a` drops a trailing empty field: `e1,` is an empty name too (ninety-seventh
    # hostile round, N2: it was accepted where `e1, ` was refused).
    [[ "$(trim "$dirs")" != *, ]] || listed+=("")
    # Each experiment once on a line, by its resolved path (hundred-and-thirty-fifth hostile
    # round, second review, N2: `e3,./e3` exported the runs twice; collect.sh refuses it).
    declare -A once=()
    for d in "${listed[@]}"; do
        d="$(trim "$d")"
        if [ -n "$d" ]; then
            resolved="$(realpath -m -- "$d")"
            if [ -n "${once[$resolved]:-}" ]; then
                echo "seeds: $queue: line '$name': the experiment directory '$d' is listed already on this line (as '${once[$resolved]}'); nothing trained" >&2
                exit 2
            fi
            once["$resolved"]="$d"
        fi
        if [ -z "$d" ]; then
            echo "seeds: $queue: line '$name': an empty name in the experiment directory list '$(trim "$dirs")'; nothing trained" >&2
            exit 2
        fi
        if [ ! -e "$d" ] && [ ! -L "$d" ]; then
            echo "seeds: $queue: line '$name': the experiment directory '$d' does not exist (a misspelt name?): each listed directory is a committed experiment's; nothing trained" >&2
            exit 2
        fi
        # The experiment, not its runs/ nor anything in it: the export writes into
        # <experiment>/runs (eighty-third hostile round, N3: 'experiments/e1/runs' exported
        # into experiments/e1/runs/runs; eighty-fifth, N2: 'experiments/e1/runs/.' passed a
        # check of the last name's spelling). Judged by the path resolved, every component.
        rel="$(realpath -m --relative-to=. -- "$d")"
        case "/$rel/" in
        */runs/*)
            above="$rel/"
            above="${above%%/runs/*}"
            echo "seeds: $queue: line '$name': '$d' is ($rel) a runs/ directory or inside one; list its experiment ('$above'), whose runs/ the export writes; nothing trained" >&2
            exit 2
            ;;
        esac
    done
done < "$queue"
# A SEEDS_ONLY pattern that names no line is an error before any training, not a silent
# "queue done" (`|| [ -n ... ]`, here and below: a last line without a newline is read too).
if [ -n "${SEEDS_ONLY:-}" ]; then
    names=()
    while IFS='|' read -r name _ || [ -n "$name" ]; do
        name="$(trim "$name")"
        case "$name" in '' | '#'*) continue ;; esac
        names+=("$name")
    done < "$queue"
    IFS=',' read -ra patterns <<< "$SEEDS_ONLY"
    for p in "${patterns[@]}"; do
        p="$(trim "$p")"
        found=""
        for name in "${names[@]}"; do
            # shellcheck disable=SC2053 # a glob pattern on purpose
            if [[ "$name" == $p ]]; then found=1; break; fi
        done
        if [ -z "$found" ]; then
            echo "seeds: SEEDS_ONLY: '$p' names no line of $queue" >&2
            exit 2
        fi
    done
fi
# Whether the line named $1 is one SEEDS_ONLY selects (every line without it).
selected() {
    [ -n "${SEEDS_ONLY:-}" ] || return 0
    local p
    local -a patterns
    IFS=',' read -ra patterns <<< "$SEEDS_ONLY"
    for p in "${patterns[@]}"; do
        # shellcheck disable=SC2053 # a glob pattern on purpose
        if [[ "$1" == $(trim "$p") ]]; then return 0; fi
    done
    return 1
}
# The --set column $1 as the sweep's words, in args: `read -a` splits on blanks and expands
# no glob (a file named `sweep.seeds=1` must not replace `sweep.seeds=[1]`).
set_args() {
    local s
    local -a words
    args=()
    read -ra words <<< "$1"
    for s in "${words[@]}"; do args+=(--set "$s"); done
}
# Each line the queue will train, asked of the tool itself before any line trains: its dry
# run reads and checks the config with the line's --set words as the sweep will. A config
# ntk-train refuses (not TOML, a key it does not know, a --set it refuses) failed only at
# its turn, after the earlier lines had trained and exported (ninety-seventh hostile round,
# N2). The dry run plans into a new, empty place, not the line's runs/seeds/<name>: what is
# there (runs of another config, a point another process is training) is that line's
# failure at its turn, and the queue goes on with the others (ninety-eighth hostile round,
# D1: such a line stopped the whole queue). About half a second a line.
# A place that cannot be made (a missing or read-only TMPDIR) is said in the script's words
# with status 2, and the place is removed however the check ends (ninety-ninth hostile
# round, N4: mktemp's own words and status 1; an empty directory left by an interrupt).
if [ -z "${SEEDS_EXPORT_ONLY:-}" ]; then
    if ! check_dir="$(mktemp -d "${TMPDIR:-/tmp}/ntk-seeds-check.XXXXXX" 2>&1)"; then
        echo "seeds: cannot make the place its check plans into in ${TMPDIR:-/tmp} ($check_dir): set TMPDIR to a directory this user may write; nothing trained" >&2
        exit 2
    fi
    trap 'rmdir "$check_dir" 2>/dev/null || true' EXIT
    while IFS='|' read -r name config _ sets || [ -n "$name" ]; do
        name="$(trim "$name")"
        case "$name" in '' | '#'*) continue ;; esac
        selected "$name" || continue
        set_args "$sets"
        if ! why="$("$bin" sweep --config "$(trim "$config")" --out "$check_dir/$name" "${args[@]}" --dry-run 2>&1 >/dev/null)"; then
            echo "seeds: $queue: line '$name': ntk-train refuses it (its dry run): ${why#error: }; nothing trained" >&2
            exit 2
        fi
    done < "$queue"
    rmdir "$check_dir"
    trap - EXIT
fi
# Unfinished runs parked by an earlier machine (experiments/seeds/park.sh save, committed)
# continue from their checkpoints here; a run directory this machine has is kept.
# A tarball it cannot restore is said, the queue goes on (that run starts again), and the
# queue's status says so at the end.
parked_failed=0
if [ -z "${SEEDS_EXPORT_ONLY:-}" ] && ! bash experiments/seeds/park.sh restore; then
    parked_failed=1
fi
while IFS='|' read -r name config dir sets || [ -n "$name" ]; do
    name="$(trim "$name")"
    case "$name" in '' | '#'*) continue ;; esac
    config="$(trim "$config")"
    dir="$(trim "$dir")"
    selected "$name" || continue
    if [ -z "${SEEDS_EXPORT_ONLY:-}" ]; then
        set_args "$sets"
        restore_exported "$name" "$config" "$dir"
        echo "=== $(date -u +%FT%TZ) $name: $config ${args[*]}"
        # A line that fails (a diverged seed is not a failure) is reported; the queue goes on.
        if ! "$bin" sweep --config "$config" --out "runs/seeds/$name" --resume "${args[@]}"; then
            # Nothing exported: the directory may hold runs another config made (the sweep
            # refuses them), which are not this line's. Exported once the line succeeds.
            echo "seeds: $name: the sweep ended with an error (see above); nothing exported; going on" >&2
            lines_failed=$((lines_failed + 1))
            continue
        fi
    fi
    IFS=',' read -ra dirs <<< "$dir"
    for d in "${dirs[@]}"; do export_runs "$name" "$(trim "$d")"; done
done < "$queue"
# The queue goes on past a failed line, and its status says so at the end.
if [ "$lines_failed" -gt 0 ] || [ "$exports_refused" -gt 0 ] || [ "$parked_failed" -gt 0 ]; then
    unparked=""
    [ "$parked_failed" -eq 0 ] || unparked=", a parked run not restored"
    echo "=== $(date -u +%FT%TZ) queue done; $lines_failed line(s) failed, $exports_refused run(s) not exported$unparked (see above)" >&2
    exit 1
fi
echo "=== $(date -u +%FT%TZ) queue done"
