import Foundation
import ShelfCore

/// An M3U or M3U8 playlist file read for import: its entries as absolute paths with their line
/// numbers. Entries may be relative to the file's folder (`..` included), absolute, `file://` URLs
/// with percent-encoding, or Windows paths with backslashes; a BOM and CRLF line ends are accepted,
/// `#EXTM3U`, `#EXTINF` and every other `#` line are comments.
struct PlaylistFile {
    /// One entry: the line it is on (from 1) and the absolute, standardized path it names (nil when
    /// it names no local file, e.g. an `http://` stream or a `C:\` path).
    struct Entry {
        let line: Int
        let text: String
        let path: String?
    }

    let path: String
    let entries: [Entry]

    /// The playlist's name: the file's name without its extension.
    var name: String { URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent }

    /// Playlist files larger than this are not playlists anyone wrote by hand or by a player.
    static let maxBytes = 16 << 20

    /// Reads `path` in whatever encoding it was written (`LegacyText`): M3U8 is UTF-8, a plain
    /// `.m3u` is often the Windows code page Winamp wrote in.
    static func read(_ path: String) throws(PlaylistFileError) -> PlaylistFile {
        guard let data = FileContents.read(path) else { throw .unreadable(path) }
        guard data.count <= maxBytes else { throw .tooLarge(path, data.count) }
        guard let text = LegacyText.decode(data)?.text else { throw .notText(path) }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        var entries: [Entry] = []
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            entries.append(Entry(line: index + 1, text: line, path: resolve(line, in: folder)))
        }
        return PlaylistFile(path: path, entries: entries)
    }

    /// The absolute path an entry names, or nil for one that names no local file.
    static func resolve(_ entry: String, in folder: URL) -> String? {
        if entry.lowercased().hasPrefix("file://") {
            guard let url = URL(string: entry), url.isFileURL else { return nil }
            return url.standardizedFileURL.path
        }
        // Other URL schemes (http://, rtsp://) are streams, not files.
        if let colon = entry.firstIndex(of: ":"), entry[..<colon].count > 1, entry[entry.index(after: colon)...].hasPrefix("//") { return nil }
        let slashed = entry.replacingOccurrences(of: "\\", with: "/")
        // A drive letter names a file on another machine.
        if slashed.count >= 2, slashed.dropFirst().first == ":", slashed.first?.isLetter == true { return nil }
        let url = slashed.hasPrefix("/") ? URL(fileURLWithPath: slashed) : folder.appendingPathComponent(slashed)
        return url.standardizedFileURL.path
    }
}

/// Why a playlist file could not be read; always names the file.
enum PlaylistFileError: Error, CustomStringConvertible {
    case unreadable(String)
    case tooLarge(String, Int)
    case notText(String)

    var description: String {
        switch self {
        case .unreadable(let path): "\(path): playlist file cannot be read"
        case .tooLarge(let path, let size): "\(path): playlist file of \(size) bytes is beyond \(PlaylistFile.maxBytes); left out"
        case .notText(let path): "\(path): playlist file \(LegacyText.refusal); left out"
        }
    }
}

extension Library {
    /// Makes each playlist file a playlist (the same file again updates the same playlist, which
    /// remembers its path), its entries in the file's order. An entry that matches no track, or
    /// names a file outside the folders imported, is reported with its line and skipped.
    func importPlaylistFiles(_ files: [String], roots: [URL], into report: inout ImportReport) async throws {
        let rootPaths = roots.map { $0.standardizedFileURL.path }
        func inside(_ path: String) -> Bool {
            rootPaths.contains { root in path == root || path.hasPrefix(root.hasSuffix("/") ? root : root + "/") }
        }
        var parsed: [PlaylistFile] = []
        for file in files {
            do { parsed.append(try PlaylistFile.read(file)) } catch { report.warnings.append(.init(path: file, error: "\(error)")) }
        }
        guard !parsed.isEmpty else { return }
        let outcome: (Int, [ImportReport.Failure]) = try await write { batch in
            var changed = 0
            var warnings: [ImportReport.Failure] = []
            for file in parsed {
                var tracks: [TrackID] = []
                for entry in file.entries {
                    guard let path = entry.path else {
                        warnings.append(.init(path: file.path, error: "\(file.path):\(entry.line): \(entry.text) is not a local file; skipped"))
                        continue
                    }
                    guard inside(path) else {
                        warnings.append(.init(path: file.path, error: "\(file.path):\(entry.line): \(path) is outside the music folders; skipped"))
                        continue
                    }
                    // Paths compare as bytes: a playlist written on another system may spell the
                    // folder's accents composed (NFC) where the disk has them decomposed (NFD).
                    var found: Int64?
                    for spelling in [path, path.precomposedStringWithCanonicalMapping, path.decomposedStringWithCanonicalMapping] where found == nil {
                        found = try batch.db.scalar(Int64.self, "SELECT id FROM track WHERE path = ?", [spelling])
                    }
                    guard let id = found else {
                        warnings.append(.init(path: file.path, error: "\(file.path):\(entry.line): no track for \(path); skipped"))
                        continue
                    }
                    tracks.append(TrackID(id))
                }
                let known = try batch.db.scalar(Int64.self, "SELECT playlist_id FROM playlist_file WHERE path = ?", [file.path])
                if let known, try batch.playlist(PlaylistID(known)) != nil {
                    guard try batch.playlistItems(PlaylistID(known)) != tracks else { continue }
                    try batch.setPlaylistItems(PlaylistID(known), tracks)
                } else {
                    let id = try batch.createPlaylist(Playlist(name: file.name.isEmpty ? "Playlist" : file.name))
                    try batch.setPlaylistItems(id, tracks)
                    try batch.db.execute("INSERT OR REPLACE INTO playlist_file (path, playlist_id) VALUES (?, ?)", [file.path, id.rawValue])
                }
                changed += 1
            }
            return (changed, warnings)
        }
        report.playlists += outcome.0
        report.warnings += outcome.1
        report.commits += 1
    }
}
