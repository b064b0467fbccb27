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

# private_apt DIR TYPE [DEB_ARCH]: an apt state of its own in DIR, so the
# host's apt and dpkg are never touched: the host's Debian mirrors as TYPE
# ("deb" or "deb-src") sources, restricted to DEB_ARCH when given, an empty
# dpkg status, and its own lists and cache. Sets the array apt_opts that
# points apt-get at it.
private_apt() {
  local dir="$1" type="$2" arch="${3:-}"
  mkdir -p "$dir"/etc/sources.list.d "$dir"/etc/preferences.d \
    "$dir"/lists/partial "$dir"/archives/partial
  : > "$dir/status"
  local sources="$dir/etc/sources.list.d/debian.sources"
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    # deb822 stanzas: one type each, and only the target architecture.
    sed -e "s/^Types:.*/Types: $type/" -e '/^Architectures:/d' \
      ${arch:+-e "/^Types:/a Architectures: $arch"} \
      /etc/apt/sources.list.d/debian.sources > "$sources"
  else
    local suites
    for suites in "debian|bookworm bookworm-updates" \
                  "debian-security|bookworm-security"; do
      echo "Types: $type"
      if [ -n "$arch" ]; then echo "Architectures: $arch"; fi
      echo "URIs: http://deb.debian.org/${suites%%|*}"
      echo "Suites: ${suites#*|}"
      echo "Components: main"
      echo "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"
      echo
    done > "$sources"
  fi
  apt_opts=(
    -o Dir::Etc::SourceList=/dev/null
    -o "Dir::Etc::SourceParts=$dir/etc/sources.list.d"
    -o Dir::Etc::Preferences=/dev/null
    -o "Dir::Etc::PreferencesParts=$dir/etc/preferences.d"
    -o "Dir::State::Lists=$dir/lists"
    -o "Dir::State::status=$dir/status"
    -o "Dir::Cache=$dir" -o "Dir::Cache::Archives=$dir/archives"
    -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=
    -o Debug::NoLocking=1 -o APT::Sandbox::User=root
    -o APT::Install-Recommends=false -o APT::Get::Assume-Yes=true -q
  )
  if [ -n "$arch" ]; then
    apt_opts+=(-o "APT::Architecture=$arch" -o "APT::Architectures::=$arch")
  fi
}
