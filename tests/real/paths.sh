# Where the real-wheel tests keep what they fetch (sourced by every script that reads the wheels):
#   WHEEL_CACHE  $DENPEX_WHEEL_CACHE, default /var/cache/denpex-wheels: what is kept between runs
#                and what a CI cache saves: the .whl files pip downloaded (dl/) and dl/MANIFEST
#                (name, sha256, size). Its budget is 8 GB (tests/real/fetch.sh).
#   WHEEL_TREES  $DENPEX_WHEEL_TREES, default /var/tmp/denpex-wheel-trees: what fetch.sh makes
#                from those wheels (unpacked/, env/, the tests' scratch/). It is derived: delete
#                it, and the next fetch unpacks it again from the cache without downloading.
# Two directories, because the unpacked trees are larger than the wheels (the wheels are zip
# files): keeping the unpacked trees as the cache would not fit the budget.
WHEEL_CACHE=${DENPEX_WHEEL_CACHE:-/var/cache/denpex-wheels}
WHEEL_TREES=${DENPEX_WHEEL_TREES:-/var/tmp/denpex-wheel-trees}
