# Path checks shared by run.sh and park.sh (sourced by both after they `cd` to the
# repository root).

# The first symbolic link among the components of path $1 (but $2, when given, a leading
# path the user may link: runs/ on a larger disk), from its first component down to the
# whole path (experiments, experiments/e1, experiments/e1/runs, ...), or nothing when none
# is one. Nothing is written through such a link (seventy-third hostile round, D3: an
# export went through a linked <experiment>/runs, and `park.sh restore` unpacked a run
# through a linked runs/seeds/<line>/runs, into the foreign directory it points to; the
# check of a link stopped at the run directory itself).
first_link() {
    local prefix="" part
    local -a parts
    IFS='/' read -ra parts <<< "$1"
    case "$1" in /*) prefix=/ ;; esac
    for part in "${parts[@]}"; do
        case "$part" in '' | .) continue ;; esac
        if [ -z "$prefix" ]; then prefix="$part"; else prefix="${prefix%/}/$part"; fi
        # $2, when given, is a leading path the user may link (runs/ on a larger disk).
        if [ -L "$prefix" ] && [ "$prefix" != "${2:-}" ]; then
            echo "$prefix"
            return 0
        fi
    done
}
