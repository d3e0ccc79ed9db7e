# netns.sh: two "hosts" on one machine for tests: network namespaces A and B joined by a
# veth pair, with names unique to this run, always torn down on exit. Source it, then:
#
#   netns_setup || { echo "SKIP $NETNS_WHY"; ...; }   # 1 (and NETNS_WHY) when not root or
#                                                     # `ip netns add` fails
#   netns_exec A CMD...     run CMD in namespace A (or B)
#   $NETNS_ADDR_A, $NETNS_ADDR_B   the two IPv4 addresses (one /24)
#   netns_link_down / netns_link_up   take the link down (both ends) and bring it back
#   netns_teardown          delete both namespaces (the veth pair goes with them); also run
#                           by the EXIT trap netns_setup adds (after any EXIT trap the caller
#                           had set before calling it), and safe to call twice
#
# Traffic between A and B crosses only the veth pair: neither namespace has another link
# but its own loopback, and the root namespace is not reachable from them.
NETNS_A="" NETNS_B="" NETNS_VETH_A="" NETNS_VETH_B="" NETNS_ADDR_A="" NETNS_ADDR_B="" NETNS_WHY=""

netns_setup() {
    if [ "$(id -u)" != 0 ]; then NETNS_WHY="network namespaces need root"; return 1; fi
    if ! command -v ip >/dev/null 2>&1; then NETNS_WHY="no ip (iproute2)"; return 1; fi
    local tag
    tag=$(printf '%05d%03d' $(($$ % 100000)) $((RANDOM % 1000)))
    NETNS_A="tirpc_a_$tag" NETNS_B="tirpc_b_$tag"
    NETNS_VETH_A="tva$tag" NETNS_VETH_B="tvb$tag" # at most 15 characters
    local net="10.$((200 + RANDOM % 50)).$((RANDOM % 250))"
    NETNS_ADDR_A="$net.1" NETNS_ADDR_B="$net.2"
    # the EXIT trap: the caller's, then the teardown
    local prev
    prev=$(trap -p EXIT | sed -E "s/^trap -- '(.*)' EXIT$/\1/")
    trap "${prev:+$prev; }netns_teardown" EXIT
    trap 'exit 130' INT TERM
    local err
    if ! err=$(ip netns add "$NETNS_A" 2>&1); then NETNS_WHY="ip netns add failed: $err"; NETNS_A=""; netns_teardown; return 1; fi
    if ! err=$(ip netns add "$NETNS_B" 2>&1); then NETNS_WHY="ip netns add failed: $err"; NETNS_B=""; netns_teardown; return 1; fi
    if ! err=$( {
        ip link add "$NETNS_VETH_A" netns "$NETNS_A" type veth peer name "$NETNS_VETH_B" netns "$NETNS_B" &&
            ip -n "$NETNS_A" addr add "$NETNS_ADDR_A/24" dev "$NETNS_VETH_A" &&
            ip -n "$NETNS_B" addr add "$NETNS_ADDR_B/24" dev "$NETNS_VETH_B" &&
            ip -n "$NETNS_A" link set lo up && ip -n "$NETNS_B" link set lo up &&
            ip -n "$NETNS_A" link set "$NETNS_VETH_A" up && ip -n "$NETNS_B" link set "$NETNS_VETH_B" up
    } 2>&1); then
        NETNS_WHY="veth setup failed: $err"
        netns_teardown
        return 1
    fi
    return 0
}

netns_exec() { # netns_exec A|B CMD...
    local ns=$NETNS_A
    [ "$1" = B ] && ns=$NETNS_B
    shift
    ip netns exec "$ns" "$@"
}

netns_link_down() {
    ip -n "$NETNS_A" link set "$NETNS_VETH_A" down 2>/dev/null
    ip -n "$NETNS_B" link set "$NETNS_VETH_B" down 2>/dev/null
    return 0
}

netns_link_up() {
    ip -n "$NETNS_A" link set "$NETNS_VETH_A" up &&
        ip -n "$NETNS_B" link set "$NETNS_VETH_B" up
}

netns_teardown() {
    local ns pid
    for ns in "$NETNS_A" "$NETNS_B"; do
        [ -n "$ns" ] || continue
        # processes still inside would keep nothing alive, but end them: they are the test's
        for pid in $(ip netns pids "$ns" 2>/dev/null); do kill "$pid" 2>/dev/null; done
        ip netns del "$ns" 2>/dev/null
    done
    NETNS_A="" NETNS_B=""
    return 0
}
