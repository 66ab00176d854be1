import HRMCLI
import NIOCore
import Synchronization

/// The names and addresses by which this machine is reached beyond loopback: its host name (also
/// as `NAME.local`, mDNS), and every interface's address. Listening beyond loopback, a `Host` is
/// answered only when it is one of these (or a loopback name, or an `--allow-host`): a page of
/// another site that rebinds its own name to this machine's address sends its own name.
final class MachineNames: Sendable {
    private struct State {
        var names: Set<String>
        var addresses: Set<String>
        var lastRead: ContinuousClock.Instant
    }
    private let state: Mutex<State>
    /// Addresses are read again when an unknown one is asked for (DHCP may have given a new one),
    /// at most this often.
    static let rereadInterval: Duration = .seconds(5)

    init() {
        state = Mutex(State(names: Self.hostNames(), addresses: Self.interfaceAddresses(), lastRead: .now))
    }

    /// The host name as people type it, for the log line: nil when it cannot be had.
    var hostName: String? { HostName.current() }

    /// `name` (lowercased, without brackets or port) is this machine's.
    func contains(_ name: String) -> Bool {
        if let canonical = Self.canonicalAddress(name) {
            let (known, stale) = state.withLock { state in
                (
                    state.addresses.contains(canonical),
                    ContinuousClock.now - state.lastRead >= Self.rereadInterval
                )
            }
            if known || !stale { return known }
            let addresses = Self.interfaceAddresses()
            state.withLock { state in
                state.addresses = addresses
                state.lastRead = .now
            }
            return addresses.contains(canonical)
        }
        return state.withLock { $0.names.contains(name) }
    }

    /// An IP address in the form `inet_ntop` gives (IPv6 compressed, lowercase), or nil for a name.
    static func canonicalAddress(_ text: String) -> String? {
        guard text.contains(":") || text.allSatisfy({ $0.isNumber || $0 == "." }) else { return nil }
        return (try? SocketAddress(ipAddress: text, port: 0))?.ipAddress
    }

    /// The host name, its first label (`pi` of `pi.lan`) and `.local` forms, lowercased.
    static func hostNames() -> Set<String> {
        guard let name = HostName.current()?.lowercased() else { return [] }
        var names: Set<String> = [name, name + ".local"]
        if let first = name.split(separator: ".").first {
            names.insert(String(first))
            names.insert(first + ".local")
        }
        return names
    }

    static func interfaceAddresses() -> Set<String> {
        let devices = (try? System.enumerateDevices()) ?? []
        return Set(devices.compactMap { $0.address?.ipAddress.flatMap(canonicalAddress) })
    }
}
