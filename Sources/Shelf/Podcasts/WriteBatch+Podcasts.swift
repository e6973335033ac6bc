import Foundation
import ShelfCore
import ShelfDatabase

/// Podcast channels and episodes, written inside a `library.write` batch. The server's podcast
/// service fetches; these only record what it found, so a failed fetch never leaves a half row.
extension WriteBatch {
    /// Subscribes to the feed at `url` (an `http` or `https` URL); the channel starts `new` until
    /// its first refresh. Subscribing to a URL already followed is an error naming the channel.
    @discardableResult
    public func addPodcastChannel(url: String) throws -> PodcastChannel {
        try SavedRows.checkWebURL(url, field: "url")
        if let existing = try db.scalar(Int64.self, "SELECT id FROM podcast_channel WHERE url = ?", [url]) {
            throw LibraryError.invalidValue(field: "url", value: url, reason: "the library already follows this feed (channel pc-\(existing))")
        }
        try db.execute("INSERT INTO podcast_channel (url, created) VALUES (?, ?)", [url, now])
        return try requireChannel(SavedID(db.lastInsertRowID))
    }

    /// Sets a channel's status and error (a message only with `.error`).
    public func setPodcastChannelStatus(_ id: SavedID, _ status: PodcastStatus, error: String? = nil) throws {
        try db.execute("UPDATE podcast_channel SET status = ?, error_message = ? WHERE id = ?", [status.rawValue, error, id.rawValue])
        if db.changes == 0 { throw LibraryError.objectNotFound(kind: "podcast channel", id: "pc-\(id)") }
    }

    /// Records a feed read whole: the channel's title, description and picture address, and its
    /// items as episodes: new ones added (`new`, or `skipped` without an enclosure), known ones
    /// (by guid) updated in what the feed says while their status and file stay. Returns the IDs
    /// of the episodes added.
    @discardableResult
    public func savePodcastFeed(_ id: SavedID, _ feed: PodcastFeed) throws -> [SavedID] {
        _ = try requireChannel(id)
        try db.execute(
            """
            UPDATE podcast_channel SET title = ?, description = ?, image_url = ?, status = 'completed', error_message = NULL,
              refreshed = ? WHERE id = ?
            """, [feed.title, feed.description, feed.imageURL, now, id.rawValue])
        var added: [SavedID] = []
        for item in feed.items {
            let known = try db.scalar(Int64.self, "SELECT id FROM podcast_episode WHERE channel_id = ? AND guid = ?", [id.rawValue, item.guid])
            if let known {
                try db.execute(
                    """
                    UPDATE podcast_episode SET title = ?, description = ?, published = ?, url = coalesce(?, url), mime_type = ?,
                      declared_size = ?, duration = CASE WHEN file IS NULL THEN ? ELSE duration END WHERE id = ?
                    """, [item.title, item.description, item.published, item.url, item.mimeType, item.length, item.duration, known])
            } else {
                try db.execute(
                    """
                    INSERT INTO podcast_episode (channel_id, guid, title, description, published, url, mime_type, declared_size,
                      duration, status, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                    [
                        id.rawValue, item.guid, item.title, item.description, item.published, item.url ?? "", item.mimeType, item.length,
                        item.duration, (item.url == nil ? PodcastStatus.skipped : .new).rawValue, now,
                    ])
                added.append(SavedID(db.lastInsertRowID))
            }
        }
        return added
    }

    /// Records the channel's fetched picture (a file name inside its folder), or forgets it.
    public func setPodcastChannelImage(_ id: SavedID, file: String?) throws {
        try db.execute("UPDATE podcast_channel SET image_file = ? WHERE id = ?", [file, id.rawValue])
    }

    /// Sets an episode's status and error; any status but `completed` drops the file name, so a
    /// file is served only after `completePodcastEpisode` recorded it. With `ifStatus`, only an
    /// episode in that status changes (a failed download does not undo a delete); nothing else is
    /// then an error.
    public func setPodcastEpisodeStatus(_ id: SavedID, _ status: PodcastStatus, error: String? = nil, ifStatus: PodcastStatus? = nil) throws {
        guard status != .completed else {
            throw LibraryError.invalidValue(field: "status", value: "completed", reason: "an episode completes through completePodcastEpisode")
        }
        try db.execute(
            "UPDATE podcast_episode SET status = ?1, error_message = ?2, file = NULL, size = NULL WHERE id = ?3 AND (?4 IS NULL OR status = ?4)",
            [status.rawValue, error, id.rawValue, ifStatus?.rawValue])
        if db.changes == 0, ifStatus == nil { throw LibraryError.objectNotFound(kind: "podcast episode", id: "pe-\(id)") }
    }

    /// Records a download that finished whole: its file name, size and what the audio holds. Only
    /// an episode still `downloading` completes: one deleted meanwhile (or its channel) throws, and
    /// the caller removes the file.
    public func completePodcastEpisode(_ id: SavedID, file: String, size: Int64, audio: PodcastAudio) throws {
        try db.execute(
            """
            UPDATE podcast_episode SET status = 'completed', error_message = NULL, file = ?, size = ?, bit_rate = ?, codec = ?,
              duration = coalesce(?, duration) WHERE id = ? AND status = 'downloading'
            """, [file, size, audio.bitRate.map { Int64($0) }, audio.codec, audio.duration, id.rawValue])
        if db.changes == 0 { throw LibraryError.objectNotFound(kind: "podcast episode being downloaded", id: "pe-\(id)") }
    }

    /// Deletes a channel with its episodes' rows (the caller removes the files).
    public func deletePodcastChannel(_ id: SavedID) throws {
        try db.execute("DELETE FROM podcast_channel WHERE id = ?", [id.rawValue])
        if db.changes == 0 { throw LibraryError.objectNotFound(kind: "podcast channel", id: "pc-\(id)") }
    }

    private func requireChannel(_ id: SavedID) throws -> PodcastChannel {
        guard let channel = try db.queryOne(PodcastRows.selectChannel + " WHERE id = ?", [id.rawValue], PodcastRows.decodeChannel) else {
            throw LibraryError.objectNotFound(kind: "podcast channel", id: "pc-\(id)")
        }
        return channel
    }
}

/// How podcast rows are read.
enum PodcastRows {
    static let selectChannel =
        "SELECT id, url, title, description, image_url, image_file, status, error_message, created, refreshed FROM podcast_channel"
    static let selectEpisode = """
        SELECT id, channel_id, guid, title, description, published, url, mime_type, declared_size, duration, status, error_message,
          file, size, bit_rate, codec, created FROM podcast_episode
        """

    static func decodeChannel(_ row: Row) throws -> PodcastChannel {
        PodcastChannel(
            id: SavedID(try row.int64(0)), url: try row.string(1), title: try row.string(2), description: try row.string(3),
            imageURL: row.optionalString(4), imageFile: row.optionalString(5), status: PodcastStatus(rawValue: try row.string(6)) ?? .error,
            errorMessage: row.optionalString(7), created: try row.get(8), refreshed: try row.get(9))
    }

    static func decodeEpisode(_ row: Row) throws -> PodcastEpisode {
        PodcastEpisode(
            id: SavedID(try row.int64(0)), channel: SavedID(try row.int64(1)), guid: try row.string(2), title: try row.string(3),
            description: try row.string(4), published: try row.get(5), url: try row.string(6), mimeType: row.optionalString(7),
            declaredSize: row.optionalInt64(8), duration: row.optionalDouble(9), status: PodcastStatus(rawValue: try row.string(10)) ?? .error,
            errorMessage: row.optionalString(11), file: row.optionalString(12), size: row.optionalInt64(13),
            bitRate: row.optionalInt64(14).map { Int($0) }, codec: row.optionalString(15), created: try row.get(16))
    }
}

extension Library {
    /// Every podcast channel, by title.
    public func podcastChannels() async throws -> [PodcastChannel] {
        try await read { db in try db.query(PodcastRows.selectChannel + " ORDER BY title COLLATE NOCASE, id", [], PodcastRows.decodeChannel) }
    }

    /// The channel with this ID, or nil.
    public func podcastChannel(_ id: SavedID) async throws -> PodcastChannel? {
        try await read { db in try db.queryOne(PodcastRows.selectChannel + " WHERE id = ?", [id.rawValue], PodcastRows.decodeChannel) }
    }

    /// A channel's episodes, newest first.
    public func podcastEpisodes(of channel: SavedID) async throws -> [PodcastEpisode] {
        try await read { db in
            try db.query(PodcastRows.selectEpisode + " WHERE channel_id = ? ORDER BY published DESC, id DESC", [channel.rawValue], PodcastRows.decodeEpisode)
        }
    }

    /// The newest episodes of every channel, at most `count`.
    public func newestPodcastEpisodes(count: Int) async throws -> [PodcastEpisode] {
        try await read { db in
            try db.query(
                PodcastRows.selectEpisode + " WHERE status != 'deleted' ORDER BY published DESC, id DESC LIMIT ?", [Int64(count)],
                PodcastRows.decodeEpisode)
        }
    }

    /// The episode with this ID, or nil.
    public func podcastEpisode(_ id: SavedID) async throws -> PodcastEpisode? {
        try await read { db in try db.queryOne(PodcastRows.selectEpisode + " WHERE id = ?", [id.rawValue], PodcastRows.decodeEpisode) }
    }

    /// The duration, bit rate and codec of an audio file, read as import reads files (TagLib, else
    /// ffprobe); nil when neither can read it as audio.
    public static func probeAudio(at path: String) -> PodcastAudio? {
        guard let (tags, _) = try? AudioFile.read(URL(fileURLWithPath: path)) else { return nil }
        return PodcastAudio(
            duration: tags.durationMilliseconds > 0 ? Double(tags.durationMilliseconds) / 1000 : nil,
            bitRate: tags.bitrate > 0 ? tags.bitrate : nil, codec: tags.codec.isEmpty ? nil : tags.codec)
    }
}
