import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One entry of `trusted-proxies`: an address or a CIDR block, IPv4 or IPv6.
public struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The network's address bytes (4 or 16), host bits cleared.
    let bytes: [UInt8]
    /// Leading bits that must match.
    let prefix: Int
    /// How it was written.
    public let description: String

    /// Parses `192.168.0.0/16`, `10.1.2.3`, `::1` or `fd00::/8`; nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPNetwork.bytes(of: String(parts[0])) else { return nil }
        let bits = address.count * 8
        var prefix = bits
        if parts.count == 2 {
            guard let given = Int(parts[1]), (0...bits).contains(given), parts[1].allSatisfy(\.isASCII) else { return nil }
            prefix = given
        }
        self.prefix = prefix
        bytes = IPNetwork.masked(address, prefix)
        description = text
    }

    /// Whether `address` (an IP literal as a socket or a header gives it) lies inside.
    public func contains(_ address: String) -> Bool {
        guard let other = IPNetwork.bytes(of: address), other.count == bytes.count else { return false }
        return IPNetwork.masked(other, prefix) == bytes
    }

    /// The address's bytes; an IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) as its IPv4 form, so a
    /// dual-stack socket's peers match IPv4 ranges.
    static func bytes(of text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let all = withUnsafeBytes(of: &v6) { Array($0) }
        if all[0..<10].allSatisfy({ $0 == 0 }) && all[10] == 0xFF && all[11] == 0xFF { return Array(all[12...]) }
        return all
    }

    private static func masked(_ bytes: [UInt8], _ prefix: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let keep = min(max(prefix - index * 8, 0), 8)
            return keep == 8 ? byte : byte & UInt8(truncatingIfNeeded: 0xFF << (8 - keep))
        }
    }
}

/// Who a request really comes from when it arrives through a reverse proxy, and how the client
/// reached the proxy. Only from `trusted-proxies` are the forwarding headers believed; from any
/// other address they are ignored, so a client cannot forge its address, scheme or host.
public struct TrustedProxies: Sendable {
    /// The addresses and ranges whose forwarding headers are believed; empty: none (the default).
    public var networks: [IPNetwork]

    /// Proxies from `networks`.
    public init(_ networks: [IPNetwork] = []) { self.networks = networks }

    /// Whether `address` is one of the trusted proxies.
    public func trusts(_ address: String) -> Bool { networks.contains { $0.contains(address) } }

    /// The client behind the connection from `peer`, with the request's `headers` (lower-case names).
    public func client(peer: String, headers: [String: String], isTLS: Bool) -> ForwardedClient {
        let direct = ForwardedClient(address: peer, scheme: isTLS ? "https" : "http", host: headers["host"], proxied: false)
        guard !networks.isEmpty, trusts(peer) else { return direct }
        let elements = headers["forwarded"].map(Self.forwardedElements) ?? []
        let chain: [String] =
            elements.isEmpty
            ? Self.values(headers["x-forwarded-for"] ?? "").map(Self.bareAddress).filter { !$0.isEmpty }
            : elements.compactMap { $0["for"].map(Self.bareAddress) }
        // The right-most address no trusted proxy stands for: each proxy appends the address it
        // saw, so what lies left of the first untrusted one may have been written by the client.
        var address = peer
        for candidate in chain.reversed() {
            address = candidate
            if !trusts(candidate) { break }
        }
        let last = elements.last ?? [:]
        let scheme = (last["proto"] ?? Self.first(headers["x-forwarded-proto"]))?.lowercased()
        let host = last["host"] ?? Self.first(headers["x-forwarded-host"])
        return ForwardedClient(
            address: address, scheme: scheme == "https" || scheme == "http" ? scheme! : direct.scheme, host: host ?? direct.host, proxied: true)
    }

    /// The first of a comma-separated header's values, trimmed; nil when there is none.
    static func first(_ value: String?) -> String? {
        guard let value, let first = values(value).first?.trimmingCharacters(in: .whitespaces), !first.isEmpty else { return nil }
        return first
    }

    /// A comma-separated header's values, split at every comma scalar. Not by `Character`: a
    /// client's value ending in a prepending mark (U+0600) made one character of it and the comma
    /// a proxy appended after it, hiding the proxy's hop (found by shelf-fuzz).
    static func values(_ header: String) -> [String] {
        header.unicodeScalars.split(separator: ",", omittingEmptySubsequences: false).map { String(String.UnicodeScalarView($0)) }
    }

    /// An address without its port or brackets (`"[2001:db8::1]:4711"` → `2001:db8::1`,
    /// `192.0.2.1:80` → `192.0.2.1`); anything else (`unknown`, `_hidden`) as it is.
    static func bareAddress(_ text: String) -> String {
        var value = text.trimmingCharacters(in: .whitespaces)
        if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 { value = String(value.dropFirst().dropLast()) }
        if value.hasPrefix("["), let close = value.firstIndex(of: "]") { return String(value[value.index(after: value.startIndex)..<close]) }
        if value.filter({ $0 == ":" }).count == 1, let colon = value.firstIndex(of: ":") { return String(value[..<colon]) }
        return value
    }

    /// RFC 7239's `Forwarded`: comma-separated elements of `;`-separated `name=value` pairs, values
    /// perhaps quoted; names lower-cased. A comma always ends an element, even inside quotes: no
    /// value Shelf reads holds one, and an unclosed quote a client sent swallowed the element its
    /// proxy appended (found by shelf-fuzz). Scalars, not characters, for the reason `values` gives.
    static func forwardedElements(_ header: String) -> [[String: String]] {
        var elements: [[String: String]] = []
        var current: [String: String] = [:]
        var name = ""
        var value = ""
        var inName = true
        var quoted = false
        var escaped = false
        func endPair() {
            let key = name.trimmingCharacters(in: .whitespaces).lowercased()
            if !key.isEmpty { current[key] = value.trimmingCharacters(in: .whitespaces) }
            name = ""
            value = ""
            inName = true
        }
        for scalar in header.unicodeScalars {
            let character = Character(scalar)
            if quoted, scalar == "," {
                quoted = false
                escaped = false
                endPair()
                elements.append(current)
                current = [:]
                continue
            }
            if quoted {
                if escaped {
                    value.append(character)
                    escaped = false
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    quoted = false
                } else {
                    value.append(character)
                }
                continue
            }
            switch character {
            case "=" where inName: inName = false
            case "\"" where !inName: quoted = true
            case ";": endPair()
            case ",":
                endPair()
                elements.append(current)
                current = [:]
            default:
                if inName { name.append(character) } else { value.append(character) }
            }
        }
        endPair()
        if !current.isEmpty { elements.append(current) }
        return elements
    }
}

/// The client a request stands for: its address, and the scheme and host it used.
public struct ForwardedClient: Sendable, Equatable {
    /// The client's address: the socket's peer, or the one a trusted proxy forwarded.
    public var address: String
    /// `http` or `https`, as the client reached the first hop.
    public var scheme: String
    /// The host (and port) the client asked for; nil when no header names one.
    public var host: String?
    /// Whether the request came through a trusted proxy.
    public var proxied: Bool
}
