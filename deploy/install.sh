#!/bin/sh
# Install litellm-conol and the LiteLLM proxy, at the versions this repository is tested with
# (constraints/litellm-1.108.txt, which reads constraints.txt), into a fresh virtualenv, from this
# checkout and the package registry (PyPI).
# deploy/Dockerfile runs it; run it yourself for a systemd install (docs/team-deployment.md).
#
#   deploy/install.sh [VENV]        default VENV: /opt/litellm-conol
#   PYTHON=python3.12 deploy/install.sh /opt/litellm-conol
#
# Then: VENV/bin/litellm --config deploy/team_config.yaml … (see litellm-conol.service).
set -eu

SRC=$(cd "$(dirname "$0")/.." && pwd)
VENV=${1:-/opt/litellm-conol}
PYTHON=${PYTHON:-python3}

"$PYTHON" -m venv "$VENV"
# A regular (not editable) install: the venv does not need this checkout afterwards.
"$VENV/bin/python" -m pip install --disable-pip-version-check --quiet \
    -c "$SRC/constraints/litellm-1.108.txt" "$SRC[proxy]"

# Prove the install: the handler registers, the proxy and the usage-log callback import, and the
# catalog ships with the package. No network (the cost map is the bundled one).
LITELLM_LOCAL_MODEL_COST_MAP=True "$VENV/bin/python" -c '
import litellm_conol, litellm_conol.usage_log, litellm.proxy.proxy_server
litellm_conol.register()
print("litellm-conol", __import__("importlib.metadata").metadata.version("litellm-conol"),
      "with litellm", __import__("importlib.metadata").metadata.version("litellm"))
'
"$VENV/bin/litellm-conol" models >/dev/null
test -x "$VENV/bin/litellm"
echo "installed into $VENV"
