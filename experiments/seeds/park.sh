#!/usr/bin/env bash
# Carries the seed queue's unfinished runs from one machine to the next. A session's
# machine goes away with its runs/ (not committed): a 500-epoch run that took a session to
# reach epoch 290 started again at epoch 0 on the next machine. `save` packs each
# unfinished run of runs/seeds (its files and its current checkpoint only) into
# experiments/seeds/parked/<line>/<run id>.tar, to be committed; `restore` (run.sh calls
# it first) unpacks each parked run whose line has no such run here yet, so the queue
# resumes from its checkpoint, which ntk-train verifies (SHA-256 of every file). Each
# tarball carries the SHA-256 sums of its files (PARKED.sha256); restore holds the unpacked
# files to them, and a damaged tarball is moved aside (<run id>.tar.damaged), not restored:
# its run starts again and the rest of its queue line trains.
#
#   bash experiments/seeds/park.sh save       # before a session ends; then commit parked/
#   bash experiments/seeds/park.sh restore    # on a new machine (run.sh does it)
#   bash experiments/seeds/park.sh list
#
# A parked run is removed by `save` once its run has finished here (its files are then
# exported by run.sh, and committed with the experiment). A run here is never replaced by a
# parked one: `restore` skips a run directory that exists, saying so (and failing, when the
# parked checkpoint is ahead of it); nor is a parked checkpoint replaced by an earlier one:
# `save` keeps a parked epoch beyond this machine's, says so and fails. `save` may run while
# the queue trains: it copies the checkpoint that checkpoint.json names and parks the copy
# only if checkpoint.json did not change meanwhile (else it tries again). `restore` takes a
# tarball only of plain files and directories with relative names below the run (no links,
# no `..`, no absolute names): a committed tarball cannot write outside its run directory;
# nor does `restore` write through a symbolic link anywhere in runs/seeds/<line>/runs/<run id>
# (said, and failing: seventy-third hostile round, D3). Nor does `save` read a run through a
# symbolic link anywhere in runs/seeds/<line>/runs/<run id>/checkpoints/epoch-NNNNN (under
# runs/, which may itself be a link), nor write or remove through one anywhere in
# experiments/seeds/parked/<line>/<run id>.tar: said, and failing (issue 65, round 74 D2: it
# packed a linked checkpoints/'s foreign files into the archive to be committed, wrote into a
# linked parked/<line>'s foreign directory and removed a foreign <run id>.tar there).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=experiments/seeds/links.sh
source experiments/seeds/links.sh

parked=experiments/seeds/parked
seeds=runs/seeds
# The file in each tarball with the SHA-256 sums of its other files (save writes it,
# restore checks and removes it).
SUMS=PARKED.sha256

usage() {
    echo "usage: bash experiments/seeds/park.sh save|restore|list" >&2
    exit 2
}
[ $# -eq 1 ] || usage

# The checkpoint directory a run's checkpoint.json names (checkpoints/epoch-NNNNN), or
# nothing when it names none of that form.
checkpoint_dir() {
    local dir
    dir="$(grep -o '"dir": *"checkpoints/epoch-[0-9]*"' "$1/checkpoint.json" | head -n 1 | sed 's/.*"\(checkpoints\/epoch-[0-9]*\)"/\1/')" || true
    echo "$dir"
}

# The epoch, a decimal number, of a checkpoint directory's name (checkpoints/epoch-00105:
# 105), or nothing for a name of another form.
epoch_of() {
    case "$1" in
    *epoch-[0-9]*) echo "$((10#${1##*epoch-}))" ;;
    esac
}

# Copies run directory $1's top-level files and the checkpoint its checkpoint.json names
# into directory $2; fails when checkpoint.json changed during the copy (a checkpoint
# written meanwhile) or names no checkpoint directory there. Status 3, with the link on
# stdout, when a component of the checkpoint's path below runs/ is a symbolic link: nothing
# is read through it (round 74 D2: a linked checkpoints/ was packed from its target).
snapshot() {
    local run="$1" to="$2" ckpt f link
    # cp's own complaints are not shown: a checkpoint removed mid-copy (the run wrote the
    # next one) is tried again, and what fails at last is said once.
    cp -p "$run/checkpoint.json" "$to/checkpoint.json" 2>/dev/null || return 1
    ckpt="$(checkpoint_dir "$to")"
    [ -n "$ckpt" ] || return 2
    link="$(first_link "$run/$ckpt" runs)"
    if [ -n "$link" ]; then
        echo "$link"
        return 3
    fi
    [ -d "$run/$ckpt" ] || return 1
    for f in "$run"/*; do
        [ -f "$f" ] && [ ! -L "$f" ] || continue
        case "$(basename "$f")" in checkpoint.json | *.ntk-tmp-* | .ntk-lock) continue ;; esac
        cp -p "$f" "$to/" 2>/dev/null || return 1
    done
    mkdir -p "$to/checkpoints"
    cp -pR "$run/$ckpt" "$to/checkpoints/" 2>/dev/null || return 1
    # The same pointer after the copy: the checkpoint copied is the one it names.
    cmp -s "$run/checkpoint.json" "$to/checkpoint.json" || return 1
    echo "$ckpt"
}

save() {
    local saved=0 kept=0 removed=0 failed=0 undropped=0
    if [ -d "$seeds" ]; then
        for run in "$seeds"/*/runs/*/; do
            run="${run%/}"
            [ -d "$run" ] || continue
            # Epoch checkpoints without checkpoint.json: a first checkpoint cut off before its
            # pointer, which ntk-train starts over (eighty-ninth hostile round, N9: passed over
            # without a word).
            if [ ! -f "$run/checkpoint.json" ] && [ ! -f "$run/summary.json" ] &&
                compgen -G "$run/checkpoints/epoch-*" > /dev/null; then
                echo "park: $run: epoch checkpoints but no checkpoint.json (its first checkpoint was cut off before its pointer, or the pointer was removed): not parked; ntk-train starts such a run over, or refuses it where the pointer was removed by hand" >&2
                continue
            fi
            [ -f "$run/checkpoint.json" ] && [ ! -f "$run/summary.json" ] || continue
            if [ -L "$run" ]; then
                # ntk-train refuses a linked run directory too: nothing trains through it.
                echo "park: $run: a symbolic link, not a run directory of the queue's: not parked" >&2
                continue
            fi
            local line id dest tmp stage ckpt="" try rc parked_epoch here link
            line="$(basename "$(dirname "$(dirname "$run")")")"
            id="$(basename "$run")"
            dest="$parked/$line/$id.tar"
            # Nothing is written through a link anywhere on the parked path (a linked
            # parked/<line> took the archive into the foreign directory it points to).
            link="$(first_link "$dest")"
            if [ -n "$link" ]; then
                local fix="make $link a directory of its own"
                [ "$link" != "$dest" ] || fix="move $link away"
                echo "park: $run: $link is a symbolic link (to $(readlink "$link")), never written through here: not parked; $fix and save again" >&2
                failed=$((failed + 1))
                continue
            fi
            stage="$(mktemp -d)"
            chmod 755 "$stage"
            for try in 1 2 3 4 5; do
                rm -rf "${stage:?}"/* && rc=0
                ckpt="$(snapshot "$run" "$stage")" || rc=$?
                [ "$rc" -eq 0 ] && break
                [ "$rc" -eq 3 ] && break
                ckpt=""
                [ "$rc" -eq 2 ] && break
                sleep 1
            done
            if [ "$rc" -eq 3 ]; then
                rm -rf "$stage"
                echo "park: $run: $ckpt is a symbolic link (to $(readlink "$ckpt")), never read through here: not parked; make $ckpt a directory of its own and save again" >&2
                failed=$((failed + 1))
                continue
            fi
            if [ -z "$ckpt" ]; then
                rm -rf "$stage"
                echo "park: $run: no consistent checkpoint to copy (checkpoint.json names none here, or its checkpoint changed or went at each of 5 tries): not parked" >&2
                failed=$((failed + 1))
                continue
            fi
            # Anything but a plain file or a directory among the copied files (a link, a
            # FIFO, a device, a socket inside the checkpoint directory) would be packed as
            # such, and restore refuses a tarball that holds one (safe_tarball): said, not
            # parked (eighty-sixth hostile round, D4: "1 saved", then never restored, for a
            # link; eighty-seventh, D2: for a FIFO).
            local inner kind
            inner="$(find "$stage" ! -type f ! -type d -printf '%y %P\n' | head -n 1)"
            if [ -n "$inner" ]; then
                rm -rf "$stage"
                case "${inner%% *}" in
                l) kind="a symbolic link" ;;
                p) kind="a FIFO" ;;
                s) kind="a socket" ;;
                *) kind="a device" ;;
                esac
                echo "park: $run: ${inner#* } is $kind, which restore refuses to unpack: not parked; make it a file of its own and save again" >&2
                failed=$((failed + 1))
                continue
            fi
            # The sums of the files packed, inside the tarball: restore holds the unpacked
            # files to them (ninetieth hostile round, N4: a checkpoint damaged in its tarball
            # was restored, and ntk-train's refusal of it failed its whole queue line).
            local sums
            sums="$(cd "$stage" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum)"
            printf '%s\n' "$sums" > "$stage/$SUMS"
            mkdir -p "$parked/$line"
            tmp="$parked/$line/.$id.tar.park-tmp-$$"
            # Sorted names, no owners or times: the same checkpoint gives the same bytes.
            if ! tar -cf "$tmp" -C "$stage" --sort=name --owner=0 --group=0 --numeric-owner \
                --mtime=@0 .; then
                rm -f "$tmp"
                rm -rf "$stage"
                echo "park: $run: tar failed: not parked" >&2
                failed=$((failed + 1))
                continue
            fi
            rm -rf "$stage"
            if [ -f "$dest" ] && cmp -s "$tmp" "$dest"; then
                rm -f "$tmp"
                kept=$((kept + 1))
                continue
            fi
            # A parked checkpoint at or beyond this machine's is never replaced by it (this
            # machine kept a copy of the run of its own, which restore does not replace):
            # said, and counted as not parked.
            parked_epoch="$(tarball_epoch "$dest")"
            here="$(epoch_of "$ckpt")"
            if [ -n "$parked_epoch" ] && [ "$parked_epoch" -eq "$here" ]; then
                rm -f "$tmp"
                kept=$((kept + 1))
                continue
            fi
            if [ -n "$parked_epoch" ] && [ "$parked_epoch" -gt "$here" ]; then
                rm -f "$tmp"
                echo "park: $dest holds epoch $parked_epoch, this machine's $run is at epoch $here: the parked one kept (move $run away and run restore to continue from it)" >&2
                failed=$((failed + 1))
                continue
            fi
            mv "$tmp" "$dest"
            echo "park: $dest ($ckpt)"
            saved=$((saved + 1))
        done
    fi
    # Parked runs that have finished here are dropped; never through a symbolic link (a
    # linked parked/<line>'s foreign <run id>.tar was removed: round 74 D2), said, failing.
    if [ -d "$parked" ]; then
        for tarball in "$parked"/*/*.tar; do
            [ -f "$tarball" ] || continue
            local line id link
            line="$(basename "$(dirname "$tarball")")"
            id="$(basename "$tarball" .tar)"
            if [ -f "$seeds/$line/runs/$id/summary.json" ]; then
                link="$(first_link "$tarball")"
                if [ -n "$link" ]; then
                    echo "park: $tarball: $link is a symbolic link (to $(readlink "$link")), never removed through here: not dropped" >&2
                    undropped=$((undropped + 1))
                    continue
                fi
                rm -f "$tarball"
                echo "park: $tarball: finished here, dropped"
                removed=$((removed + 1))
            fi
        done
        find "$parked" -mindepth 1 -type d -empty -delete
    fi
    echo "park: $saved saved, $kept unchanged, $removed dropped"
    [ "$failed" -eq 0 ] || echo "park: $failed run(s) not parked (see above)" >&2
    [ "$undropped" -eq 0 ] || echo "park: $undropped finished run(s) not dropped (see above)" >&2
    [ "$failed" -eq 0 ] && [ "$undropped" -eq 0 ] || return 1
}

# The checkpoint directory a parked tarball holds (checkpoints/epoch-NNNNN), or nothing.
tarball_checkpoint() {
    [ -f "$1" ] || return 0
    tar -tf "$1" 2>/dev/null | grep -o 'checkpoints/epoch-[0-9]*' | head -n 1 || true
}
# Its epoch (epoch_of), or nothing.
tarball_epoch() {
    epoch_of "$(tarball_checkpoint "$1")"
}

# Whether tarball $1 holds only plain files and directories with relative names that stay
# below the directory it is unpacked into.
safe_tarball() {
    local listing
    listing="$(tar -tvf "$1" 2>/dev/null)" || return 1
    # Types: `-` a plain file, `d` a directory; anything else (links, devices) is refused.
    if printf '%s\n' "$listing" | grep -q '^[^-d]'; then return 1; fi
    local names
    names="$(tar -tf "$1" 2>/dev/null)" || return 1
    while IFS= read -r name; do
        case "$name" in
        /* | .. | ../* | */.. | */../*) return 1 ;;
        esac
    done <<< "$names"
    return 0
}

# Moves the tarball $1 that restore cannot take aside, kept, at the first free name
# ($1.damaged, $1.damaged.2, ...; an earlier session's is kept: ninety-second hostile round,
# D3), never through a symbolic link, so that later restores go on and save can park the run
# that starts again (ninety-third, N7: a truncated one failed every later restore); prints
# what was done, said as moved only once it is.
move_aside() {
    local aside="$1.damaged" k=1
    while [ -e "$aside" ] || [ -L "$aside" ]; do
        k=$((k + 1))
        aside="$1.damaged.$k"
    done
    if [ -z "$(first_link "$1")" ] && mv -n "$1" "$aside" 2> /dev/null && [ ! -e "$1" ] &&
        [ -f "$aside" ]; then
        echo "moved to $aside"
    else
        echo "left as it is (a symbolic link is on its path, or it could not be moved): move it away by hand, or save cannot park the run that starts again"
    fi
}

# Whether the files unpacked in $1 are those its $SUMS lists, each with its SHA-256: none
# altered, none missing, none added (ninety-second hostile round, N3: a file the sums did not
# list was restored into the run).
sums_hold() {
    (cd "$1" && sha256sum --quiet --strict -c "$SUMS" > /dev/null 2>&1) || return 1
    local listed present
    listed="$(sed -E 's/^[0-9a-f]{64}  //' "$1/$SUMS" | sort)"
    present="$(cd "$1" && find . -type f ! -name "$SUMS" | sort)"
    [ "$listed" = "$present" ]
}

restore() {
    local restored=0 failed=0
    [ -d "$parked" ] || { echo "park: nothing parked"; return 0; }
    for tarball in "$parked"/*/*.tar; do
        [ -f "$tarball" ] || continue
        local line id dest tmp link
        line="$(basename "$(dirname "$tarball")")"
        id="$(basename "$tarball" .tar)"
        dest="$seeds/$line/runs/$id"
        link="$(first_link "$dest" runs)"
        if [ -n "$link" ]; then
            echo "park: $tarball: $link is a symbolic link (to $(readlink "$link")), never written through here: not restored; make $link a directory of its own and restore again" >&2
            failed=$((failed + 1))
            continue
        fi
        if [ -e "$dest" ] || [ -L "$dest" ]; then
            local here="" there
            there="$(tarball_epoch "$tarball")"
            [ -f "$dest/checkpoint.json" ] && here="$(epoch_of "$(checkpoint_dir "$dest")")"
            if [ -n "$there" ] && { [ -z "$here" ] || [ "$there" -gt "$here" ]; }; then
                echo "park: $dest exists here${here:+ at epoch $here}: kept; $tarball is ahead (epoch $there): move $dest away and restore again to continue from it" >&2
                failed=$((failed + 1))
            else
                echo "park: $dest exists here: kept, $tarball not restored"
            fi
            continue
        fi
        if ! safe_tarball "$tarball"; then
            echo "park: $tarball: not a parked run (unreadable, or it holds a link, an absolute name or ..): not restored, $(move_aside "$tarball")" >&2
            failed=$((failed + 1))
            continue
        fi
        if ! mkdir -p "$seeds/$line/runs" 2>/dev/null; then
            echo "park: $tarball: cannot make $seeds/$line/runs here (a file in its way?): not restored" >&2
            failed=$((failed + 1))
            continue
        fi
        tmp="$seeds/$line/runs/.$id.park-tmp-$$"
        rm -rf "$tmp"
        mkdir "$tmp"
        if ! tar -xf "$tarball" -C "$tmp" --no-same-owner --touch || [ ! -f "$tmp/checkpoint.json" ]; then
            rm -rf "$tmp"
            echo "park: $tarball: could not be unpacked as a run (no checkpoint.json): not restored, $(move_aside "$tarball")" >&2
            failed=$((failed + 1))
            continue
        fi
        # Held to the sums packed with it (tarballs parked before 2026-12-05 have none): a
        # damaged one is moved aside, kept, and its run starts again; the queue goes on.
        if [ -f "$tmp/$SUMS" ]; then
            if ! sums_hold "$tmp"; then
                rm -rf "$tmp"
                echo "park: $tarball: damaged (its files are not those the SHA-256 sums packed with them list): not restored, $(move_aside "$tarball"); the run starts again" >&2
                failed=$((failed + 1))
                continue
            fi
            rm -f "$tmp/$SUMS"
        fi
        mv "$tmp" "$dest"
        echo "park: restored $dest"
        restored=$((restored + 1))
    done
    echo "park: $restored restored"
    [ "$failed" -eq 0 ] || { echo "park: $failed tarball(s) not restored (see above)" >&2; return 1; }
}

list() {
    [ -d "$parked" ] || { echo "park: nothing parked"; return 0; }
    for tarball in "$parked"/*/*.tar; do
        [ -f "$tarball" ] || continue
        echo "$tarball: $(tarball_checkpoint "$tarball")"
    done
}

case "$1" in
save) save ;;
restore) restore ;;
list) list ;;
*) usage ;;
esac
