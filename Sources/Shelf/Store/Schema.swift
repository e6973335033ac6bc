import Foundation

/// The canonical store's layouts, one per `PRAGMA user_version`.
enum Schema {
    /// The version this build writes and reads.
    static let currentVersion = 18

    /// The track columns shared by both versions, in `TrackRow` order after `id`.
    private static let trackColumns = """
          path              TEXT    NOT NULL UNIQUE,
          file_size         INTEGER NOT NULL DEFAULT 0,
          file_modified     REAL,
          title             TEXT,
          artist            TEXT,
          album             TEXT,
          album_artist      TEXT,
          composer          TEXT,
          genre             TEXT,
          year              INTEGER,
          track_number      INTEGER,
          track_count       INTEGER,
          disc_number       INTEGER,
          disc_count        INTEGER,
          duration          REAL,
          bitrate           INTEGER,
          sample_rate       INTEGER,
          channels          INTEGER,
          codec             TEXT,
          compilation       INTEGER NOT NULL DEFAULT 0,
          comment           TEXT,
          lyrics            TEXT,
          sort_title        TEXT,
          sort_artist       TEXT,
          sort_album        TEXT,
          sort_album_artist TEXT,
          sort_composer     TEXT,
        """

    private static let trackStats = """
          date_added        REAL    NOT NULL,
          date_modified     REAL    NOT NULL,
          play_count        INTEGER NOT NULL DEFAULT 0,
          skip_count        INTEGER NOT NULL DEFAULT 0,
          last_played       REAL,
          rating            INTEGER NOT NULL DEFAULT 0 CHECK (rating BETWEEN 0 AND 100),
          audio_hash        TEXT
        """

    private static let playlists = """
        CREATE TABLE playlist (
          id            INTEGER PRIMARY KEY AUTOINCREMENT,
          name          TEXT    NOT NULL,
          parent_id     INTEGER REFERENCES playlist(id) ON DELETE CASCADE,
          kind          INTEGER NOT NULL DEFAULT 0,
          rules         TEXT,
          date_added    REAL    NOT NULL,
          date_modified REAL    NOT NULL
        );
        CREATE INDEX playlist_parent ON playlist(parent_id) WHERE parent_id IS NOT NULL;
        -- Ordered items; a track may appear more than once, so the position is the key.
        CREATE TABLE playlist_item (
          playlist_id INTEGER NOT NULL REFERENCES playlist(id) ON DELETE CASCADE,
          position    INTEGER NOT NULL,
          track_id    INTEGER NOT NULL REFERENCES track(id) ON DELETE CASCADE,
          PRIMARY KEY (playlist_id, position)
        ) WITHOUT ROWID;
        CREATE INDEX playlist_item_track ON playlist_item(track_id);
        """

    /// Version 2: artwork in its own content-addressed table, the change log, the store's UUID.
    static let version2 = """
        CREATE TABLE meta (
          key   TEXT PRIMARY KEY,
          value TEXT NOT NULL
        ) WITHOUT ROWID;
        -- Immutable, content-addressed pictures shared by every track that shows them. The bytes come
        -- last so that reading the other columns never touches the blob's overflow pages.
        CREATE TABLE artwork (
          id         BLOB    PRIMARY KEY,
          sha256     BLOB    NOT NULL UNIQUE,
          byte_count INTEGER NOT NULL,
          created    REAL    NOT NULL,
          data       BLOB    NOT NULL
        );
        CREATE TABLE track (
          id                INTEGER PRIMARY KEY AUTOINCREMENT,
        \(trackColumns)
          artwork_id        BLOB REFERENCES artwork(id),
        \(trackStats)
        );
        CREATE INDEX track_artwork ON track(artwork_id) WHERE artwork_id IS NOT NULL;
        CREATE INDEX track_audio_hash ON track(audio_hash) WHERE audio_hash IS NOT NULL;
        \(playlists)
        -- One row per committed write transaction that changed anything.
        CREATE TABLE change_transaction (
          id           INTEGER PRIMARY KEY AUTOINCREMENT,
          committed_at REAL NOT NULL
        );
        -- One row per object changed in a transaction; object_id is an INTEGER (tracks, playlists)
        -- or a 16-byte UUID blob (artwork), hence no declared type.
        CREATE TABLE change_log (
          seq         INTEGER PRIMARY KEY AUTOINCREMENT,
          tx          INTEGER NOT NULL,
          object_type INTEGER NOT NULL,
          object_id            NOT NULL,
          op          INTEGER NOT NULL,
          groups      INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX change_log_tx ON change_log(tx);
        -- Net playlist membership changes per transaction (a track entering or leaving a playlist),
        -- so that history scoped to playlists can tell which tracks came into or left its view.
        CREATE TABLE playlist_item_log (
          tx          INTEGER NOT NULL,
          playlist_id INTEGER NOT NULL,
          track_id    INTEGER NOT NULL,
          delta       INTEGER NOT NULL,
          PRIMARY KEY (tx, playlist_id, track_id)
        ) WITHOUT ROWID;
        CREATE INDEX playlist_item_log_playlist ON playlist_item_log(playlist_id, tx);
        -- The net effect of the compacted part of the history, one row per object touched in it.
        CREATE TABLE change_summary (
          object_type    INTEGER NOT NULL,
          object_id              NOT NULL,
          existed_before INTEGER NOT NULL,
          exists_after   INTEGER NOT NULL,
          groups         INTEGER NOT NULL DEFAULT 0,
          PRIMARY KEY (object_type, object_id)
        ) WITHOUT ROWID;
        """

    /// Version 3 adds users and what belongs to each of them, on top of version 2. Passwords are
    /// encrypted (not hashed) because Subsonic's token auth needs them in clear; API keys and
    /// session tokens are stored only as their SHA-256. Every table hangs off `user` with ON DELETE
    /// CASCADE, so deleting a user deletes their keys, sessions, track data and playlist claims.
    static let version3Additions = """
        CREATE TABLE user (
          id               INTEGER PRIMARY KEY AUTOINCREMENT,
          name             TEXT    NOT NULL UNIQUE COLLATE NOCASE,
          is_admin         INTEGER NOT NULL DEFAULT 0,
          is_owner         INTEGER NOT NULL DEFAULT 0,
          password         BLOB    NOT NULL,
          created          REAL    NOT NULL,
          password_changed REAL
        );
        -- At most one owner: the user whose ratings and plays are the library's own.
        CREATE UNIQUE INDEX user_owner ON user(is_owner) WHERE is_owner = 1;
        CREATE TABLE api_key (
          id        TEXT    PRIMARY KEY,
          user_id   INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
          sha256    BLOB    NOT NULL UNIQUE,
          created   REAL    NOT NULL,
          last_used REAL
        );
        CREATE INDEX api_key_user ON api_key(user_id);
        CREATE TABLE user_session (
          sha256  BLOB    PRIMARY KEY,
          user_id INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
          created REAL    NOT NULL,
          expires REAL    NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX user_session_user ON user_session(user_id);
        CREATE INDEX user_session_expires ON user_session(expires);
        CREATE TABLE user_track (
          user_id     INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
          track_id    INTEGER NOT NULL REFERENCES track(id) ON DELETE CASCADE,
          starred     REAL,
          rating      INTEGER CHECK (rating BETWEEN 0 AND 100),
          play_count  INTEGER NOT NULL DEFAULT 0,
          last_played REAL,
          PRIMARY KEY (user_id, track_id)
        ) WITHOUT ROWID;
        CREATE INDEX user_track_starred ON user_track(user_id, starred) WHERE starred IS NOT NULL;
        -- Deleting a track cascades here; without it each delete would scan every user's rows.
        CREATE INDEX user_track_track ON user_track(track_id);
        -- A playlist without a row belongs to the library: everyone sees it.
        CREATE TABLE playlist_owner (
          playlist_id INTEGER PRIMARY KEY REFERENCES playlist(id) ON DELETE CASCADE,
          user_id     INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
          public      INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX playlist_owner_user ON playlist_owner(user_id);
        """

    /// Version 4: a user's stars on albums and artists (Subsonic's star albumId/artistId). Views
    /// are not stored, so a row names its group by the view's kind code and ID, which are derived
    /// from names and stay the same while the library changes.
    static let version4Additions = """
        CREATE TABLE user_group_star (
          user_id  INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
          kind     INTEGER NOT NULL,
          group_id INTEGER NOT NULL,
          starred  REAL    NOT NULL,
          PRIMARY KEY (user_id, kind, group_id)
        ) WITHOUT ROWID;
        """

    /// Version 8: what users keep beyond their track data — an email, the roles Subsonic apps set,
    /// bookmarks (a position in a track, with a comment), the index of the queue's current song
    /// (a queue may hold a song twice) — and the library's internet radio stations, public
    /// shares of tracks, and which albums and album artists each transaction touched (`group_log`,
    /// so a client syncing by token learns of deleted albums without the server keeping old rows).
    static let version8Additions = """
        ALTER TABLE user ADD COLUMN email TEXT NOT NULL DEFAULT '';
        ALTER TABLE user ADD COLUMN roles TEXT NOT NULL DEFAULT 'stream,download,playlist,share,podcast,settings,coverArt,comment,scrobbling';
        ALTER TABLE user ADD COLUMN max_bit_rate INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE play_queue ADD COLUMN current_index INTEGER;
        CREATE TABLE bookmark (
          user_id  INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
          track_id INTEGER NOT NULL REFERENCES track(id) ON DELETE CASCADE,
          position INTEGER NOT NULL,
          comment  TEXT    NOT NULL DEFAULT '',
          created  REAL    NOT NULL,
          changed  REAL    NOT NULL,
          PRIMARY KEY (user_id, track_id)
        ) WITHOUT ROWID;
        CREATE INDEX bookmark_track ON bookmark(track_id);
        CREATE TABLE radio_station (
          id            INTEGER PRIMARY KEY AUTOINCREMENT,
          name          TEXT    NOT NULL,
          stream_url    TEXT    NOT NULL,
          home_page_url TEXT,
          created       REAL    NOT NULL
        );
        -- A share's token is its public link; it is kept as written because getShares shows the
        -- link again (it is a capability, like a bookmarkable URL, and revoked by deleting the row).
        CREATE TABLE share (
          id           INTEGER PRIMARY KEY AUTOINCREMENT,
          token        TEXT    NOT NULL UNIQUE,
          user_id      INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
          description  TEXT    NOT NULL DEFAULT '',
          created      REAL    NOT NULL,
          expires      REAL,
          last_visited REAL,
          visit_count  INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX share_user ON share(user_id);
        CREATE TABLE share_item (
          share_id INTEGER NOT NULL REFERENCES share(id) ON DELETE CASCADE,
          position INTEGER NOT NULL,
          track_id INTEGER NOT NULL REFERENCES track(id) ON DELETE CASCADE,
          PRIMARY KEY (share_id, position)
        ) WITHOUT ROWID;
        CREATE INDEX share_item_track ON share_item(track_id);
        CREATE TABLE group_log (
          tx       INTEGER NOT NULL,
          kind     INTEGER NOT NULL,
          group_id INTEGER NOT NULL,
          PRIMARY KEY (tx, kind, group_id)
        ) WITHOUT ROWID;
        """

    /// Version 9: podcast channels and their episodes (fetched by the server into its podcasts
    /// folder; a file name is kept only once its download completed, never for a part file).
    static let version9Additions = """
        CREATE TABLE podcast_channel (
          id            INTEGER PRIMARY KEY AUTOINCREMENT,
          url           TEXT    NOT NULL UNIQUE,
          title         TEXT    NOT NULL DEFAULT '',
          description   TEXT    NOT NULL DEFAULT '',
          image_url     TEXT,
          image_file    TEXT,
          status        TEXT    NOT NULL DEFAULT 'new',
          error_message TEXT,
          created       REAL    NOT NULL,
          refreshed     REAL
        );
        CREATE TABLE podcast_episode (
          id             INTEGER PRIMARY KEY AUTOINCREMENT,
          channel_id     INTEGER NOT NULL REFERENCES podcast_channel(id) ON DELETE CASCADE,
          guid           TEXT    NOT NULL,
          title          TEXT    NOT NULL DEFAULT '',
          description    TEXT    NOT NULL DEFAULT '',
          published      REAL,
          url            TEXT    NOT NULL,
          mime_type      TEXT,
          declared_size  INTEGER,
          duration       REAL,
          status         TEXT    NOT NULL DEFAULT 'new',
          error_message  TEXT,
          file           TEXT,
          size           INTEGER,
          bit_rate       INTEGER,
          codec          TEXT,
          created        REAL    NOT NULL,
          UNIQUE (channel_id, guid)
        );
        CREATE INDEX podcast_episode_published ON podcast_episode(published DESC, id DESC);
        """

    /// Version 10: a track whose file is gone is kept, marked missing (`missing_since`), so that
    /// it comes back whole when its audio reappears; the music roots the library was imported from
    /// or serves, with the file system each was on, so that an unmounted root is told from one whose
    /// files were deleted.
    static let version10Additions = """
        ALTER TABLE track ADD COLUMN missing_since REAL;
        CREATE INDEX track_missing ON track(missing_since) WHERE missing_since IS NOT NULL;
        CREATE TABLE music_root (
          path       TEXT    PRIMARY KEY,
          device     INTEGER,
          added      REAL    NOT NULL,
          last_seen  REAL
        ) WITHOUT ROWID;
        """

    /// Version 11: libraries — a name and the music roots it holds (a root belongs to one); a
    /// user's access, NULL for every library or a JSON array of library IDs. The upgrade makes one
    /// library, "Music", of the roots already remembered, and leaves every user seeing all of it.
    static let version11Additions = """
        CREATE TABLE library (
          id      INTEGER PRIMARY KEY AUTOINCREMENT,
          name    TEXT    NOT NULL UNIQUE COLLATE NOCASE,
          created REAL    NOT NULL
        );
        ALTER TABLE music_root ADD COLUMN library_id INTEGER REFERENCES library(id);
        CREATE INDEX music_root_library ON music_root(library_id);
        ALTER TABLE user ADD COLUMN libraries TEXT;
        """

    /// Version 12: every play kept (`listen`: when, what was heard, from which client and path,
    /// with the track's text so that history survives the file), the services a user scrobbles
    /// to (`scrobble_link`, the token or session key encrypted like a password), the durable
    /// outbox of listens not yet sent (queued in the listen's own transaction), what earlier
    /// imports from other programs applied (so a second import adds nothing), and each user's
    /// rules for what is not scrobbled.
    static let version12Additions = """
        CREATE TABLE listen (
          id             INTEGER PRIMARY KEY AUTOINCREMENT,
          user_id        INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
          track_id       INTEGER REFERENCES track(id) ON DELETE SET NULL,
          played_at      REAL    NOT NULL,
          heard          REAL,
          source         TEXT    NOT NULL,
          client         TEXT    NOT NULL DEFAULT '',
          artist         TEXT    NOT NULL DEFAULT '',
          title          TEXT    NOT NULL DEFAULT '',
          album          TEXT    NOT NULL DEFAULT '',
          album_artist   TEXT    NOT NULL DEFAULT '',
          duration       REAL,
          recording_mbid TEXT,
          release_mbid   TEXT
        );
        CREATE INDEX listen_user_time ON listen(user_id, played_at, id);
        CREATE INDEX listen_track ON listen(track_id);
        CREATE TABLE scrobble_link (
          user_id      INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
          service      TEXT    NOT NULL,
          secret       BLOB    NOT NULL,
          account      TEXT    NOT NULL DEFAULT '',
          url          TEXT,
          linked       REAL    NOT NULL,
          paused       REAL,
          pause_reason TEXT,
          sent         INTEGER NOT NULL DEFAULT 0,
          last_sent    REAL,
          last_error   TEXT,
          PRIMARY KEY (user_id, service)
        ) WITHOUT ROWID;
        -- `sending`: a request carrying the row went out and its answer is not yet recorded; after
        -- a crash such rows are sent again one a request, leaning on the service's own duplicate
        -- check (a listen is keyed by its second).
        CREATE TABLE scrobble_outbox (
          id           INTEGER PRIMARY KEY AUTOINCREMENT,
          user_id      INTEGER NOT NULL,
          service      TEXT    NOT NULL,
          listen_id    INTEGER NOT NULL REFERENCES listen(id) ON DELETE CASCADE,
          played_at    REAL    NOT NULL,
          attempts     INTEGER NOT NULL DEFAULT 0,
          next_attempt REAL    NOT NULL DEFAULT 0,
          sending      INTEGER NOT NULL DEFAULT 0,
          refused      TEXT,
          FOREIGN KEY (user_id, service) REFERENCES scrobble_link(user_id, service) ON DELETE CASCADE
        );
        CREATE INDEX scrobble_outbox_queue ON scrobble_outbox(user_id, service, played_at, id);
        CREATE INDEX scrobble_outbox_listen ON scrobble_outbox(listen_id);
        CREATE TABLE import_applied (
          user_id    INTEGER NOT NULL REFERENCES user(id) ON DELETE CASCADE,
          source     TEXT    NOT NULL,
          item       TEXT    NOT NULL,
          play_count INTEGER NOT NULL DEFAULT 0,
          PRIMARY KEY (user_id, source, item)
        ) WITHOUT ROWID;
        ALTER TABLE user ADD COLUMN scrobble_rules TEXT;
        """

    /// Version 7: what each track took from beside its file (`SidecarStamp`), so a rescan notices
    /// a replaced `cover.jpg` or `.lrc` next to unchanged audio; `artist.*` pictures by album artist.
    static let version7Additions = """
        ALTER TABLE track ADD COLUMN sidecars TEXT;
        CREATE TABLE artist_picture (
          album_artist_id INTEGER PRIMARY KEY,
          artist_id       INTEGER NOT NULL,
          name            TEXT    NOT NULL,
          artwork_id      BLOB    NOT NULL REFERENCES artwork(id),
          path            TEXT    NOT NULL,
          stamp           TEXT    NOT NULL
        );
        CREATE INDEX artist_picture_artist ON artist_picture(artist_id);
        CREATE INDEX artist_picture_artwork ON artist_picture(artwork_id);
        """

    /// Version 5: each user's saved play queue (Subsonic's savePlayQueue), so a player resumes it
    /// on another device after the server restarts. A deleted track leaves its queue with it.
    /// Version 6: the details of a track's tags (lists, roles, MusicBrainz IDs, ReplayGain, release
    /// details) in one column, `TrackDetails.encoded`, NULL for a track with none; playlist files.
    static let version6Additions = """
        ALTER TABLE track ADD COLUMN details TEXT;
        -- The playlist files (.m3u, .m3u8) an import made into playlists, so that importing one
        -- again updates its playlist; a deleted playlist forgets its file.
        CREATE TABLE playlist_file (
          path        TEXT    PRIMARY KEY,
          playlist_id INTEGER NOT NULL REFERENCES playlist(id) ON DELETE CASCADE
        ) WITHOUT ROWID;
        CREATE INDEX playlist_file_playlist ON playlist_file(playlist_id);
        """

    static let version5Additions = """
        CREATE TABLE play_queue (
          user_id    INTEGER PRIMARY KEY REFERENCES user(id) ON DELETE CASCADE,
          current    INTEGER,
          position   INTEGER NOT NULL DEFAULT 0,
          changed    REAL    NOT NULL,
          changed_by TEXT    NOT NULL DEFAULT ''
        );
        CREATE TABLE play_queue_item (
          user_id  INTEGER NOT NULL REFERENCES play_queue(user_id) ON DELETE CASCADE,
          position INTEGER NOT NULL,
          track_id INTEGER NOT NULL REFERENCES track(id) ON DELETE CASCADE,
          PRIMARY KEY (user_id, position)
        ) WITHOUT ROWID;
        CREATE INDEX play_queue_item_track ON play_queue_item(track_id);
        """

    /// Version 1, the legacy layout: artwork bytes inline in the track row, no artwork table and no
    /// change log. Kept so that migration code and its tests can build such a store.
    static let legacyVersion1 = """
        CREATE TABLE meta (
          key   TEXT PRIMARY KEY,
          value TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE track (
          id                INTEGER PRIMARY KEY AUTOINCREMENT,
        \(trackColumns)
          artwork_data      BLOB,
        \(trackStats)
        );
        \(playlists)
        """

    /// Version 13: what listening to each audio identity found (`audio` is the track's audio
    /// hash, with the slice for a CUE track), per feature version: the descriptors, or why there
    /// are none (failed, short, silent), so that a move, a retag or a duplicate is never analysed
    /// again and a failure is not retried on every run. A rowid table: `max(rowid)` tells the
    /// similarity index that analysis results changed.
    static let version13Additions = """
        CREATE TABLE sonic (
          audio    TEXT    NOT NULL UNIQUE,
          version  INTEGER NOT NULL,
          status   TEXT    NOT NULL,
          reason   TEXT,
          seconds  REAL,
          features BLOB,
          analyzed REAL    NOT NULL
        );
        """

    /// Version 14: a playlist's comment (Subsonic's `comment`, which tools use to find their playlists).
    static let version14Additions = """
        ALTER TABLE playlist ADD COLUMN comment TEXT;
        """

    /// Version 16: a track's lyrics beyond the one it shows (`LyricsText`: every language of its
    /// tags, the file beside it), in the order they were found, rewritten when its file is read.
    static let version16Additions = """
        CREATE TABLE track_lyrics (
          track_id INTEGER NOT NULL REFERENCES track(id) ON DELETE CASCADE,
          position INTEGER NOT NULL,
          lang     TEXT    NOT NULL,
          source   TEXT    NOT NULL,
          text     TEXT    NOT NULL,
          PRIMARY KEY (track_id, position)
        ) WITHOUT ROWID;
        """
}
