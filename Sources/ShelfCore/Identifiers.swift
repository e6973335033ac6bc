import Foundation

/// The integer identities the store hands out (tracks, playlists, users, saved objects) and the
/// group hashes: one 64-bit number, compared, printed and encoded (a bare JSON number) as that
/// number, so each wrapper only says what its number is.
public protocol IntegerIdentifier: RawRepresentable, Hashable, Comparable, Sendable, Codable, CustomStringConvertible
where RawValue == Int64 {
    /// Wraps a stored integer.
    init(rawValue: Int64)
}

extension IntegerIdentifier {
    /// Wraps a stored integer.
    public init(_ rawValue: Int64) { self.init(rawValue: rawValue) }
    /// Orders numerically (the tie-break of equal names and the order of row IDs).
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    /// The decimal form the command line prints and takes.
    public var description: String { String(rawValue) }
    /// Decodes a bare number.
    public init(from decoder: any Decoder) throws { self.init(rawValue: try decoder.singleValueContainer().decode(Int64.self)) }
    /// Encodes as a bare number.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// A track's identity: a 64-bit integer assigned by the store and never reused, so a client that
/// remembers an ID can never confuse a deleted track with a new one.
public struct TrackID: IntegerIdentifier, ExpressibleByIntegerLiteral {
    /// The stored integer.
    public let rawValue: Int64
    /// Wraps a stored integer.
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(integerLiteral value: Int64) { rawValue = value }
    /// The placeholder a track carries before the store assigns its ID.
    public static let unassigned = TrackID(0)
}

/// A picture's identity: a UUID, fixed for the life of the (immutable) artwork row, so a new
/// picture always means a new ID and caches can tell old from new.
public struct ArtworkID: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The UUID.
    public let rawValue: UUID
    /// Wraps a UUID.
    public init(rawValue: UUID) { self.rawValue = rawValue }
    /// Wraps a UUID.
    public init(_ rawValue: UUID) { self.rawValue = rawValue }
    /// A new random ID.
    public init() { rawValue = UUID() }
    public var description: String { rawValue.uuidString }
    public init(from decoder: any Decoder) throws { rawValue = try decoder.singleValueContainer().decode(UUID.self) }
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// A playlist's (or playlist folder's) identity: a 64-bit integer, never reused.
public struct PlaylistID: IntegerIdentifier, ExpressibleByIntegerLiteral {
    /// The stored integer.
    public let rawValue: Int64
    /// Wraps a stored integer.
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(integerLiteral value: Int64) { rawValue = value }
}

/// A user's stable integer ID (never reused: the table is AUTOINCREMENT), the handle the server
/// keeps in its sessions and requests.
public struct UserID: IntegerIdentifier {
    /// The stored integer.
    public let rawValue: Int64
    /// Wraps a stored integer.
    public init(rawValue: Int64) { self.rawValue = rawValue }
}
