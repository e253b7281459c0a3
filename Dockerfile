# syntax=docker/dockerfile:1
# The chartseq image, for CI systems that run images (GitLab CI, Tekton, Jenkins): the static
# chartseq binary (musl) and helm on Alpine (which keeps a shell for CI scripts), run as a
# non-root user in /work.
#
#   docker build --build-arg CHARTSEQ_COMMIT="$(git rev-parse HEAD)" -t chartseq .
#   docker run --rm -v "$PWD:/work" chartseq lint charts/app
ARG RUST_VERSION=1.95
ARG ALPINE_VERSION=3.22

FROM rust:${RUST_VERSION}-alpine${ALPINE_VERSION} AS build
# hadolint ignore=DL3018
RUN apk add --no-cache musl-dev
WORKDIR /src
COPY . .
# There is no .git in the build context (.dockerignore): the commit comes in as an argument.
ARG CHARTSEQ_COMMIT=unknown
ENV CHARTSEQ_COMMIT=${CHARTSEQ_COMMIT}
RUN cargo build --release --locked --bin chartseq \
    && install -m 0755 target/release/chartseq /chartseq \
    && /chartseq --version

FROM alpine:${ALPINE_VERSION} AS helm
ARG HELM_VERSION=v4.1.4
ARG TARGETARCH=amd64
WORKDIR /helm
# helm's own archive, checked against the checksum published beside it.
RUN wget -q "https://get.helm.sh/helm-${HELM_VERSION}-linux-${TARGETARCH}.tar.gz" \
    && wget -q "https://get.helm.sh/helm-${HELM_VERSION}-linux-${TARGETARCH}.tar.gz.sha256sum" \
    && sha256sum -c "helm-${HELM_VERSION}-linux-${TARGETARCH}.tar.gz.sha256sum" \
    && tar -xzf "helm-${HELM_VERSION}-linux-${TARGETARCH}.tar.gz" \
    && install -m 0755 "linux-${TARGETARCH}/helm" /usr/local/bin/helm

FROM alpine:${ALPINE_VERSION}
RUN adduser -D -u 10001 chartseq
COPY --from=build /chartseq /usr/local/bin/chartseq
COPY --from=helm /usr/local/bin/helm /usr/local/bin/helm
USER 10001
WORKDIR /work
ENTRYPOINT ["chartseq"]
CMD ["--help"]
