#!/usr/bin/env bash
# Makes the TLS files of a gops run with openssl: a private CA (ca.pem, ca.key) and the
# coordinator's certificate (cert.pem, key.pem) signed by it, valid for every NAME given
# (host names or IP addresses the workers use in their --coordinator URL).
#   deploy/tls/make-certs.sh DIR NAME [NAME...]
#   gops coordinator ... --tls-cert DIR/cert.pem --tls-key DIR/key.pem
#   gops worker --coordinator https://NAME:7700 --tls-ca DIR/ca.pem ...
# Only ca.pem goes to the workers; the keys stay with the coordinator (mode 600). An
# existing CA in DIR is kept, so running it again only makes a new coordinator certificate.
set -euo pipefail

if [ "$#" -lt 2 ]; then
    echo "usage: $0 DIR NAME [NAME...]   (NAME: the coordinator's host name or IP address)" >&2
    exit 2
fi
dir=$1
shift
days=${GOPS_CERT_DAYS:-825}
command -v openssl >/dev/null || { echo "openssl is required (apt-get install openssl)" >&2; exit 1; }

umask 077
mkdir -p "$dir"

san=""
for name in "$@"; do
    if [[ $name =~ ^[0-9.]+$ || $name == *:* ]]; then
        san+="${san:+,}IP:$name"
    else
        san+="${san:+,}DNS:$name"
    fi
done

if [ ! -f "$dir/ca.pem" ] || [ ! -f "$dir/ca.key" ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
        -keyout "$dir/ca.key" -out "$dir/ca.pem" -days "$days" -subj "/CN=gops run CA" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
        2>/dev/null
fi

ext=$(mktemp)
csr=$(mktemp)
trap 'rm -f "$ext" "$csr"' EXIT
printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" \
    "extendedKeyUsage=serverAuth" "subjectAltName=$san" >"$ext"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$dir/key.pem" -out "$csr" -subj "/CN=$1" 2>/dev/null
openssl x509 -req -in "$csr" -CA "$dir/ca.pem" -CAkey "$dir/ca.key" -CAcreateserial \
    -out "$dir/cert.pem" -days "$days" -extfile "$ext" 2>/dev/null
chmod 600 "$dir/ca.key" "$dir/key.pem"
chmod 644 "$dir/ca.pem" "$dir/cert.pem"
echo "$dir: ca.pem (for the workers), cert.pem and key.pem (for the coordinator), names: $san"
