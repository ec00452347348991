# The loop in a container (seed 004's Docker executor): runner-loop, and
# runner-ui beside it, with the target repository at /workspace. compose.yaml
# builds it from this checkout after `just build` (the static commands in
# bin/): `just docker-loop DIR`. BASE is Debian 13: debian:trixie from a
# registry, or one made without a registry by `just docker-base`
# (debootstrap, imported under that name).
ARG BASE=debian:trixie
FROM ${BASE}
# Certificates this machine added to its trust store (an intercepting
# proxy's, from /usr/local/share/ca-certificates; `just docker-loop` passes
# them), trusted by apt, git, curl and Node.js alike.
ARG EXTRA_CA_CERTS=""
ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
# git for the runner; Node.js for the agent CLIs; Go for the guards of Go
# repositories (the demo's among them); bubblewrap for [sandbox] mode = "bwrap".
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl git nodejs golang-go bubblewrap \
 && rm -rf /var/lib/apt/lists/* \
 && if [ -n "$EXTRA_CA_CERTS" ]; then printf '%s\n' "$EXTRA_CA_CERTS" > /usr/local/share/ca-certificates/treeloop-build.crt && update-ca-certificates; fi
# npm from its registry (Debian's npm package pulls in hundreds of others),
# then the agent CLIs and just at the versions the tests prove (.ci/versions).
ARG NPM_VERSION=10.9.9
RUN mkdir -p /usr/local/lib/npm \
 && curl -fsSL "https://registry.npmjs.org/npm/-/npm-${NPM_VERSION}.tgz" | tar -xz -C /usr/local/lib/npm --strip-components=1 \
 && ln -s /usr/local/lib/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s /usr/local/lib/npm/bin/npx-cli.js /usr/local/bin/npx
COPY .ci/versions /usr/local/share/treeloop/versions
RUN bash -c '. /usr/local/share/treeloop/versions && npm install -g --no-fund --no-audit "${NPM_PINS[@]}"' \
 && npm cache clean --force
COPY bin/ /usr/local/bin/
COPY examples/ /usr/local/share/treeloop/examples/
# compose.yaml runs the loop as your uid:gid (nothing in your repository
# belongs to root); any uid may use this home for the CLIs' settings, and
# your logins are mounted into it.
ENV HOME=/home/treeloop
RUN mkdir -m 1777 /home/treeloop
WORKDIR /workspace
CMD ["runner-loop", "-C", "/workspace"]
