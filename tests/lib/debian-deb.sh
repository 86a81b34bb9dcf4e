# Sourced by the reference scripts (tests/sysroot/*-reference.sh).
# deb_fetch STATE ARCHES SPEC DIR: download SPEC (package:arch=version) into DIR from the
# archives the host's apt configuration names, through a private apt state in STATE that
# knows the Debian architectures ARCHES as well as the host's: apt checks the archive's signed
# Release files and every hash on the way, so a package of another architecture is as
# verified as one the host installs (the archive is never named here). Prints the .deb's path.
deb_fetch() {
	state=$1 arches=$2 spec=$3 dir=$4
	set -- -qq -o Debug::NoLocking=1 -o APT::Sandbox::User=root \
		-o Dir::State::Lists="$state/lists" -o Dir::Cache="$state/cache" \
		-o APT::Architectures::="$(dpkg --print-architecture)"
	for a in $arches; do set -- "$@" -o APT::Architectures::="$a"; done
	if [ ! -e "$state/updated" ]; then
		mkdir -p "$state/lists/partial" "$state/cache/archives/partial"
		# an index that fails its check is left out (apt says so), never used: the download
		# below then fails if the package was only there
		apt-get "$@" update >&2 || echo "deb_fetch: some indices failed (above); going on without them" >&2
		: >"$state/updated"
	fi
	(cd "$dir" && apt-get "$@" download "$spec" >&2) || return 1
	name=${spec%%:*} rest=${spec#*:}
	ls "$dir/${name}_"*"_${rest%%=*}.deb"
}
