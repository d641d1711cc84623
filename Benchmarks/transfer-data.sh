# Sourced by sftp.sh and wan.sh (after sshd-env.sh): the data both tools copy, and the check of
# each copy before its time counts.
# Needs: work, mib, files. Sets: data (big, many/), out, big_sum, many_ref; check_big, check_many.
data=$work/data-src
mkdir -p "$data/many"
head -c "${mib}M" /dev/urandom > "$data/big"
for i in $(seq "$files"); do head -c 4096 /dev/urandom > "$data/many/f$i"; done
big_sum=$(sha256sum < "$data/big")
many_sum() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum); }
many_ref=$(many_sum "$data/many")
check_big() { [ "$(sha256sum < "$1")" = "$big_sum" ] || { echo "corrupt copy: $1" >&2; exit 1; }; rm -f "$1"; }
check_many() { [ "$(many_sum "$1")" = "$many_ref" ] || { echo "corrupt tree: $1" >&2; exit 1; }; rm -rf "$1"; }
out=$work/out; mkdir -p "$out"
