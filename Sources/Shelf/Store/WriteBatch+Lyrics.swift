import Foundation
import ShelfCore
import ShelfDatabase

/// Every lyrics text of a track, the one it shows first (`track_lyrics`, schema 16).
extension WriteBatch {
    /// Replaces the lyrics texts of `track` (none: removes them). Like the sidecar stamp,
    /// they are what the file and its folder hold, rewritten with every reading of the file, so no
    /// change is recorded for them.
    public func setLyricsTexts(_ track: TrackID, _ texts: [LyricsText]) throws {
        try db.execute("DELETE FROM track_lyrics WHERE track_id = ?", [track.rawValue])
        for (position, text) in texts.enumerated() {
            try db.execute(
                "INSERT INTO track_lyrics (track_id, position, lang, source, text) VALUES (?, ?, ?, ?, ?)",
                [track.rawValue, Int64(position), text.lang, text.source, text.text])
        }
    }
}

extension Library {
    /// Every lyrics text of `track`, the one it shows (its `lyrics`) first: as its file was last
    /// read, with the shown text as it is now when it was edited since; empty without lyrics.
    public func lyricsTexts(of track: Track) async throws -> [LyricsText] {
        let stored = try await read { db in
            try db.query("SELECT lang, source, text FROM track_lyrics WHERE track_id = ? ORDER BY position", [track.id.rawValue]) {
                LyricsText(lang: try $0.string(0), source: try $0.string(1), text: try $0.string(2))
            }
        }
        guard let shown = track.lyrics, !SortKey.isBlank(shown) else { return stored.filter { !SortKey.isBlank($0.text) } }
        if stored.first?.text == shown { return stored.filter { !SortKey.isBlank($0.text) } }
        return [LyricsText(lang: "", source: "embedded", text: shown)] + stored.filter { $0.text != shown && !SortKey.isBlank($0.text) }
    }
}
