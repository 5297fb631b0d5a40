#!/bin/sh
# Creates the object-storage bucket the services use (S3_BUCKET, default "hwp").
# Idempotent: run by the one-shot `minio-init` compose service after minio is healthy,
# safe to re-run. Needs the MinIO client `mc` (shipped in the minio/minio image).
set -eu

endpoint="${MINIO_ENDPOINT:-http://minio:9000}"
user="${MINIO_ROOT_USER:?MINIO_ROOT_USER is required}"
password="${MINIO_ROOT_PASSWORD:?MINIO_ROOT_PASSWORD is required}"
bucket="${S3_BUCKET:-hwp}"

# mc keeps its config under $HOME; point it at a writable place whatever the user.
export MC_CONFIG_DIR="${MC_CONFIG_DIR:-/tmp/.mc}"

attempt=0
until mc alias set hwp "$endpoint" "$user" "$password" >/dev/null 2>&1; do
  attempt=$((attempt + 1))
  if [ "$attempt" -ge 30 ]; then
    echo "minio-init: $endpoint did not accept the credentials after $attempt tries" >&2
    exit 1
  fi
  sleep 1
done

mc mb --ignore-existing "hwp/$bucket"
# Objects stay private: browsers only reach them through pre-signed URLs.
mc anonymous set none "hwp/$bucket" >/dev/null
echo "minio-init: bucket '$bucket' ready at $endpoint"
