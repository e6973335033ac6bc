import Foundation
import Shelf

/// `shelf info`: where the library is, its schema and store ID, what it holds, and its size.
struct InfoCommand: Command {
    static let name = "info"
    static let abstract = "Show the library's path, schema version, store ID, counts and bytes on disk."
    static let synopsis = "[--json]"

    init(arguments: inout Arguments) throws {}

    func run(library: Library, output: Output) async throws {
        let info = try await library.info()
        if output.json { return try output.printJSON(info) }
        output.line("path:           \(info.path)")
        output.line("schema version: \(info.schemaVersion)")
        output.line("store id:       \(info.storeID.uuidString)")
        output.line("tracks:         \(info.trackCount)")
        output.line("artwork:        \(info.artworkCount)")
        output.line("playlists:      \(info.playlistCount)")
        output.line("bytes on disk:  \(info.bytesOnDisk) (\(Format.bytes(info.bytesOnDisk)))")
    }
}

/// Small text formatters for human-readable output.
enum Format {
    /// "12.3 MiB" style sizes.
    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }

    /// "3:07" style durations.
    static func duration(_ seconds: Double?) -> String {
        guard let seconds, seconds.isFinite else { return "" }
        let total = Int(seconds.rounded())
        return total >= 3600
            ? String(format: "%d:%02d:%02d", total / 3600, total / 60 % 60, total % 60)
            : String(format: "%d:%02d", total / 60, total % 60)
    }

    /// Pads or cuts `text` to exactly `width` characters.
    static func column(_ text: String?, _ width: Int) -> String {
        let text = (text ?? "").replacingOccurrences(of: "\n", with: " ")
        if text.count > width { return String(text.prefix(width - 1)) + "…" }
        return text + String(repeating: " ", count: width - text.count)
    }
}

extension InfoCommand {
    static let discussion = """
        Opens (or creates) the library and prints where it is, the store's schema version and ID, how many \
        tracks, pictures and playlists it holds, and the bytes its files take. A store of an older schema is \
        migrated on opening; one of a newer schema is refused rather than damaged.
        """
    static let flags: [FlagHelp] = []
    static let examples = ["shelf info", "shelf --library ~/Music/shelf info --json"]
}
