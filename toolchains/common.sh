# Shell helpers shared by the scripts in toolchains/ (sourced, not run).
# The sourcing script defines log() first.

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# retry N cmd...: the archive occasionally fails a download.
retry() {
  local n="$1" i; shift
  for ((i = 1; i <= n; i++)); do
    if "$@"; then return 0; fi
    log "attempt $i/$n failed: $*" >&2
    [ "$i" -lt "$n" ] && sleep $((i * 5))
  done
  return 1
}

# install_missing PKG...: installs, from the host's archive, the packages
# that are not installed yet; does not touch apt when all are. An index that
# will not update (a third-party source, say) is reported, not fatal: the
# install then says plainly if a package cannot be had.
install_missing() {
  local p missing=()
  for p in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null \
         | grep -q 'install ok installed'; then
      missing+=("$p")
    fi
  done
  if [ "${#missing[@]}" -eq 0 ]; then return 0; fi
  log "installing ${missing[*]}"
  retry 3 $SUDO apt-get update -q ||
    log "apt-get update failed; installing from the indexes at hand" >&2
  retry 3 $SUDO env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# own_dir DIR: creates DIR (as root if need be) and gives it to the caller,
# so the build steps and their lock files need no root.
own_dir() {
  $SUDO mkdir -p "$1"
  $SUDO chown "$(id -u):$(id -g)" "$1"
}
