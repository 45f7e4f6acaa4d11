#!/usr/bin/env bash
# Run the units of an export job four at a time with nothing but xargs: one process per report
# and UTC day, each replacing exactly its day of the report's Delta table (format = "delta").
# Units are idempotent: a failed one is simply run again, and overlapping runs are safe.
#
#   examples/units_xargs.sh JOB.toml REPORT FIRST_DAY END_DAY [PARALLEL]
#   examples/units_xargs.sh nightly.toml usage_daily 2024-06-01 2024-07-01   # June, 4 at once
#
# The range is half-open: END_DAY is not exported. The API key and the reporting URL come from
# the environment (EDGEREPORTS_API_KEY, EDGEREPORTS_REPORTING_URL), like every export; for an
# s3:// output so do the object store's settings (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...).
# EDGEREPORTS (default: edgereports) is the command to run, e.g. "python -m edgereports.cli".
set -euo pipefail

if [ "$#" -lt 4 ]; then
    echo "usage: $0 JOB.toml REPORT FIRST_DAY END_DAY [PARALLEL]" >&2
    exit 2
fi
job=$1 report=$2 first=$3 end=$4 parallel=${5:-4}

# the days [first, end), one per line (GNU date)
days() {
    local day=$first
    while [[ "$day" < "$end" ]]; do
        echo "$day"
        day=$(date -u -d "$day + 1 day" +%F)
    done
}

# The first units race to create the table: one creates it, the others find it made.
export ER_COMMAND="${EDGEREPORTS:-edgereports}" ER_JOB="$job" ER_REPORT="$report"
days | xargs -P "$parallel" -I DAY sh -c \
    '$ER_COMMAND export "$ER_JOB" --only "$ER_REPORT" --from DAY \
        --until "$(date -u -d "DAY + 1 day" +%F)" --no-progress'
