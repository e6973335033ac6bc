import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// Parses a track ID given on the command line.
func parseTrackID(_ text: String) throws -> TrackID {
    guard let value = Int64(text), value > 0 else { throw UsageError("'\(text)' is not a track ID (a positive integer)") }
    return TrackID(value)
}

/// `shelf track ID`: every stored field of one track.
struct TrackCommand: Command {
    static let name = "track"
    static let abstract = "Show every field of one track."
    static let synopsis = "ID [--json]"

    let id: TrackID

    init(arguments: inout Arguments) throws {
        let words = try arguments.positionals()
        guard words.count == 1 else { throw UsageError("track expects exactly one track ID") }
        id = try parseTrackID(words[0])
    }

    func run(library: Library, output: Output) async throws {
        guard let track = try await library.track(id) else { throw LibraryError.trackNotFound(id) }
        if output.json { return try output.printJSON(TrackWithSonic(track: track, record: try await library.sonicRecord(of: id))) }
        // The text form lists the same fields as the JSON, in the JSON's order.
        let data = try Output.encoder().encode(track)
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        for key in object.keys.sorted() {
            output.line("\(key): \(Self.text(object[key]))")
        }
    }

    /// A field as one line: a list of names joined by "; ", an object or a list of objects as
    /// compact JSON, nothing for null.
    static func text(_ value: Any?) -> String {
        switch value {
        case nil, is NSNull: return ""
        case let strings as [String]: return strings.joined(separator: "; ")
        case let nested as [Any]:
            let data = try? JSONSerialization.data(withJSONObject: nested, options: [.sortedKeys, .withoutEscapingSlashes])
            return data.map { String(decoding: $0, as: UTF8.self) } ?? ""
        case let nested as [String: Any]:
            let data = try? JSONSerialization.data(withJSONObject: nested, options: [.sortedKeys, .withoutEscapingSlashes])
            return data.map { String(decoding: $0, as: UTF8.self) } ?? ""
        case let other?: return "\(other)"
        }
    }
}

/// `shelf delete ID…`: removes tracks from the library (never their files), all in one transaction.
struct DeleteCommand: Command {
    static let name = "delete"
    static let abstract = "Remove tracks from the library (the audio files stay); all or none."
    static let synopsis = "ID... [--json]"

    let ids: [TrackID]

    init(arguments: inout Arguments) throws {
        let words = try arguments.positionals()
        guard !words.isEmpty else { throw UsageError("delete expects at least one track ID") }
        ids = try words.map(parseTrackID)
    }

    func run(library: Library, output: Output) async throws {
        var seen = Set<TrackID>()
        let unique = ids.filter { seen.insert($0).inserted }
        try await library.write { batch in
            for id in unique { try batch.deleteTrack(id) }
        }
        if output.json { return try output.printJSON(DeletedTracksDocument(deleted: unique)) }
        output.line("deleted \(unique.count) track\(unique.count == 1 ? "" : "s")")
    }
}

extension TrackCommand {
    static let discussion = """
        Prints every stored field of one track: its path, tags and sort tags, audio properties, dates, play \
        count and rating, and whether it has a picture. With --json, the same Track document the server's API gives.
        """
    static let flags: [FlagHelp] = []
    static let examples = ["shelf track 42", "shelf track 42 --json"]
}

extension DeleteCommand {
    static let discussion = """
        Removes the tracks from the library in one transaction: if any ID does not exist, none is removed. The \
        audio files stay where they are; the removal is logged in the change history so that syncing clients see it.
        """
    static let flags: [FlagHelp] = []
    static let examples = ["shelf delete 12 13 14", "shelf snapshot --filter 'path:^/mnt/old' | xargs shelf delete"]
}
