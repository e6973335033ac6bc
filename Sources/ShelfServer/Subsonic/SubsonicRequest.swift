import Foundation
import Shelf
import ShelfCore

/// A failure Subsonic clients understand: one of the protocol's codes and a message. Sent as
/// HTTP 200 with `status="failed"` (501 for an endpoint Shelf does not have).
struct SubsonicError: Error, Sendable {
    /// The protocol's code: 0 other, 10 missing parameter, 40 wrong credentials, 41 token
    /// auth unsupported, 42 auth mechanism unsupported, 43 conflicting mechanisms, 44 invalid
    /// API key, 50 not authorized, 70 not found.
    var code: Int
    /// For people; names the parameter or value at fault.
    var message: String
    /// The HTTP status (200 except for unknown endpoints and the sign-in throttle).
    var status: Int = 200

    /// An error with its code and message.
    init(_ code: Int, _ message: String, status: Int = 200) {
        self.code = code
        self.message = message
        self.status = status
    }

    static func missing(_ name: String) -> SubsonicError { SubsonicError(10, "required parameter '\(name)' is missing") }
    static func invalid(_ name: String, _ value: String, _ expected: String) -> SubsonicError {
        SubsonicError(0, "parameter '\(name)' expects \(expected), got '\(value)'")
    }
    static func notFound(_ what: String) -> SubsonicError { SubsonicError(70, "\(what) not found") }
}

/// The kinds of thing a Subsonic ID names. Each kind has its own prefix, so IDs never collide
/// across kinds; the numbers are Shelf's own stable IDs (track and playlist row IDs, and the
/// group IDs, hashes of the folded names, which do not change when tracks are added).
enum SubsonicID: Sendable, Hashable, CustomStringConvertible {
    case track(TrackID)
    case album(GroupID)
    case artist(GroupID)
    case playlist(PlaylistID)
    /// A folder on disk (folder browsing).
    case folder(FolderID)

    /// `tr-7`, `al-…`, `ar-…`, `pl-3`, `fo-…`.
    var description: String {
        switch self {
        case .track(let id): "tr-\(id.rawValue)"
        case .album(let id): "al-\(id.rawValue)"
        case .artist(let id): "ar-\(id.rawValue)"
        case .playlist(let id): "pl-\(id.rawValue)"
        case .folder(let id): "fo-\(id.rawValue)"
        }
    }

    /// The prefix and the number, for writers that append them without a String between.
    var parts: (prefix: StaticString, number: Int64) {
        switch self {
        case .track(let id): ("tr-", id.rawValue)
        case .album(let id): ("al-", id.rawValue)
        case .artist(let id): ("ar-", id.rawValue)
        case .playlist(let id): ("pl-", id.rawValue)
        case .folder(let id): ("fo-", id.rawValue)
        }
    }

    /// Parses one of the forms above; nil for anything else (a bare number included).
    init?(_ text: String) {
        let parts = text.split(separator: "-", maxSplits: 1)
        guard parts.count == 2, let number = Int64(parts[1]), number > 0, String(number) == parts[1] else { return nil }
        switch parts[0] {
        case "tr": self = .track(TrackID(number))
        case "al": self = .album(GroupID(number))
        case "ar": self = .artist(GroupID(number))
        case "pl": self = .playlist(PlaylistID(number))
        case "fo": self = .folder(FolderID(rawValue: number))
        default: return nil
        }
    }
}

/// The merged parameters of one call: the query first, then a form body's (formPost); a name may
/// repeat (lists such as `id` and `songIdToAdd`).
struct SubsonicParameters: Sendable {
    var pairs: [(name: String, value: String)]

    /// The last value of `name`.
    func value(_ name: String) -> String? { pairs.last { $0.name == name }?.value }
    /// Every value of `name`, in order.
    func values(_ name: String) -> [String] { pairs.filter { $0.name == name }.map(\.value) }
    /// Whether `name` was sent at all.
    func has(_ name: String) -> Bool { pairs.contains { $0.name == name } }

    /// The value of `name`, or error 10.
    func required(_ name: String) throws(SubsonicError) -> String {
        guard let value = value(name) else { throw .missing(name) }
        return value
    }

    /// `name` as an integer in `range` (`default` when absent); out of range or not a number is error 0.
    func int(_ name: String, default fallback: Int? = nil, in range: ClosedRange<Int>) throws(SubsonicError) -> Int? {
        guard let text = value(name), !text.isEmpty else { return fallback }
        guard let number = Int(text), range.contains(number) else {
            throw .invalid(name, text, "an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// `name` as `true`/`false`.
    func bool(_ name: String) throws(SubsonicError) -> Bool? {
        guard let text = value(name) else { return nil }
        switch text.lowercased() {
        case "true", "1": return true
        case "false", "0": return false
        default: throw .invalid(name, text, "true or false")
        }
    }

    /// `name` as an ID of any kind (error 10 when absent, 70 when it names nothing Shelf makes).
    func id(_ name: String = "id") throws(SubsonicError) -> SubsonicID {
        let text = try required(name)
        guard let id = SubsonicID(text) else { throw .notFound("'\(text)' (\(name))") }
        return id
    }

    /// `text` as a saved object's ID with `prefix` (`rs-7`); nil for anything else.
    static func saved(_ text: String, prefix: String) -> SavedID? {
        guard text.hasPrefix(prefix), let number = Int64(text.dropFirst(prefix.count)), number > 0, "\(prefix)\(number)" == text else { return nil }
        return SavedID(number)
    }

    /// `name` as the ID of a saved object with its own prefix (`rs-N` stations, `sh-N` shares,
    /// `pc-N` channels, `pe-N` episodes): error 10 when absent, 70 naming `what` when it is not one.
    func saved(_ name: String = "id", prefix: String, what: String) throws(SubsonicError) -> SavedID {
        let text = try required(name)
        guard let id = Self.saved(text, prefix: prefix) else { throw .notFound("\(what) '\(text)' (\(name))") }
        return id
    }

    /// `name` as a song ID.
    func trackID(_ name: String = "id") throws(SubsonicError) -> TrackID {
        let text = try required(name)
        return try Self.track(text, name)
    }

    /// `text` as a song ID; another kind, or nonsense, is error 70.
    static func track(_ text: String, _ name: String) throws(SubsonicError) -> TrackID {
        guard case .track(let id)? = SubsonicID(text) else { throw .notFound("song '\(text)' (\(name))") }
        return id
    }
}
