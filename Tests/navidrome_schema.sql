-- The tables of Navidrome's navidrome.db that `shelf import-from navidrome` reads, as Navidrome's
-- migrations leave them at release 0.63 (paths relative to library.path since 0.55; times as text
-- with an offset; playqueue.current an index since 0.57). The import tests build a Navidrome
-- database from this and fill it as Navidrome would.
PRAGMA foreign_keys = ON;

CREATE TABLE "user"
(
    id             varchar(255)                              not null
        primary key,
    user_name      varchar(255)                default ''    not null
        unique,
    name           varchar(255) collate NOCASE default ''    not null,
    email          varchar(255)                default ''    not null,
    password       varchar(255)                default ''    not null,  -- encrypted (reversible), not a hash
    is_admin       bool                        default FALSE not null,
    last_login_at  datetime,
    last_access_at datetime,
    created_at     datetime                                  not null,
    updated_at     datetime                                  not null
    -- unreleased (after v0.63.2): scrobble_filter varchar default '' not null
);

CREATE TABLE library (
    id integer primary key autoincrement,                 -- default library is id 1
    name text not null unique,
    path text not null unique,                            -- absolute music folder path
    remote_path text null default '',
    last_scan_at datetime not null default '0000-00-00 00:00:00',
    updated_at datetime not null default current_timestamp,
    created_at datetime not null default current_timestamp,
    last_scan_started_at datetime default '0000-00-00 00:00:00' not null,   -- v0.55
    full_scan_in_progress boolean default false not null,                   -- v0.55
    total_songs integer default 0 not null,                                 -- v0.57 (20250701010103)
    total_albums integer default 0 not null,
    total_artists integer default 0 not null,
    total_folders integer default 0 not null,
    total_files integer default 0 not null,
    total_missing_files integer default 0 not null,
    total_size integer default 0 not null,
    total_duration real DEFAULT 0,                                          -- v0.58 (20250701010108)
    default_new_users boolean DEFAULT false                                 -- v0.58
);

CREATE TABLE artist (
    id varchar(255) NOT NULL PRIMARY KEY,
    name varchar(255) NOT NULL DEFAULT '',
    full_text varchar(255) DEFAULT '',
    biography varchar(255) NOT NULL DEFAULT '',
    small_image_url varchar(255) NOT NULL DEFAULT '',
    medium_image_url varchar(255) NOT NULL DEFAULT '',
    large_image_url varchar(255) NOT NULL DEFAULT '',
    external_url varchar(255) NOT NULL DEFAULT '',
    external_info_updated_at datetime,
    order_artist_name varchar NOT NULL DEFAULT '',
    sort_artist_name varchar NOT NULL DEFAULT '',
    mbz_artist_id varchar NOT NULL DEFAULT '',
    missing boolean NOT NULL DEFAULT false,
    similar_artists jsonb NOT NULL DEFAULT '[]',
    updated_at datetime NOT NULL DEFAULT current_time,
    created_at datetime NOT NULL DEFAULT current_time,
    average_rating REAL NOT NULL DEFAULT 0,
    search_normalized TEXT NOT NULL DEFAULT '',
    uploaded_image VARCHAR(255) DEFAULT ''
);

CREATE TABLE album (
    id varchar(255) NOT NULL PRIMARY KEY,
    name varchar(255) NOT NULL DEFAULT '',
    embed_art_path varchar(255) NOT NULL DEFAULT '',
    album_artist varchar(255) NOT NULL DEFAULT '',
    min_year INT NOT NULL DEFAULT 0,
    max_year INTEGER NOT NULL DEFAULT 0,
    compilation bool NOT NULL DEFAULT FALSE,
    song_count INTEGER NOT NULL DEFAULT 0,
    duration REAL NOT NULL DEFAULT 0,
    genre varchar(255) NOT NULL DEFAULT '',
    created_at datetime,
    updated_at datetime,
    full_text varchar(255) DEFAULT '',
    album_artist_id varchar(255) DEFAULT '',
    size INTEGER NOT NULL DEFAULT 0,
    description varchar(255) NOT NULL DEFAULT '',
    small_image_url varchar(255) NOT NULL DEFAULT '',
    medium_image_url varchar(255) NOT NULL DEFAULT '',
    large_image_url varchar(255) NOT NULL DEFAULT '',
    external_url varchar(255) NOT NULL DEFAULT '',
    external_info_updated_at datetime,
    date varchar(255) NOT NULL DEFAULT '',
    min_original_year INT NOT NULL DEFAULT 0,
    max_original_year INT NOT NULL DEFAULT 0,
    original_date varchar(255) NOT NULL DEFAULT '',
    release_date varchar(255) NOT NULL DEFAULT '',
    releases INTEGER NOT NULL DEFAULT 0,
    order_album_name varchar NOT NULL DEFAULT '',
    order_album_artist_name varchar NOT NULL DEFAULT '',
    sort_album_name varchar NOT NULL DEFAULT '',
    sort_album_artist_name varchar NOT NULL DEFAULT '',
    catalog_num varchar NOT NULL DEFAULT '',
    comment varchar NOT NULL DEFAULT '',
    mbz_album_id varchar NOT NULL DEFAULT '',
    mbz_album_artist_id varchar NOT NULL DEFAULT '',
    mbz_album_type varchar NOT NULL DEFAULT '',
    mbz_album_comment varchar NOT NULL DEFAULT '',
    discs jsonb NOT NULL DEFAULT '{}',
    library_id INTEGER NOT NULL DEFAULT 1 REFERENCES library(id) ON DELETE CASCADE,
    imported_at datetime NOT NULL DEFAULT '0000-00-00 00:00:00',
    missing boolean NOT NULL DEFAULT false,
    mbz_release_group_id varchar NOT NULL DEFAULT '',
    tags jsonb NOT NULL DEFAULT '{}',
    participants jsonb NOT NULL DEFAULT '{}',
    folder_ids jsonb NOT NULL DEFAULT '[]',
    explicit_status varchar NOT NULL DEFAULT '',
    average_rating REAL NOT NULL DEFAULT 0,
    search_participants TEXT NOT NULL DEFAULT '',
    search_normalized TEXT NOT NULL DEFAULT ''
    -- unreleased (after v0.63.2): rg_album_gain REAL, rg_album_peak REAL
);

-- path is RELATIVE to library.path, '/'-separated, since v0.55.0 (20241026183640_support_new_scanner.go);
-- absolute before. mbz_recording_id = MusicBrainz recording (renamed from mbz_track_id in 20230616214944),
-- mbz_release_track_id = MusicBrainz release-track id. duration is seconds (REAL). missing=1 => file gone.
CREATE TABLE media_file (
    id varchar(255) NOT NULL PRIMARY KEY,
    path varchar(255) NOT NULL DEFAULT '',
    title varchar(255) NOT NULL DEFAULT '',
    album varchar(255) NOT NULL DEFAULT '',
    artist varchar(255) NOT NULL DEFAULT '',
    artist_id varchar(255) NOT NULL DEFAULT '',
    album_artist varchar(255) NOT NULL DEFAULT '',
    album_id varchar(255) NOT NULL DEFAULT '',
    has_cover_art bool NOT NULL DEFAULT FALSE,
    track_number INTEGER NOT NULL DEFAULT 0,
    disc_number INTEGER NOT NULL DEFAULT 0,
    year INTEGER NOT NULL DEFAULT 0,
    size INTEGER NOT NULL DEFAULT 0,
    suffix varchar(255) NOT NULL DEFAULT '',
    duration REAL NOT NULL DEFAULT 0,
    bit_rate INTEGER NOT NULL DEFAULT 0,
    genre varchar(255) NOT NULL DEFAULT '',
    compilation bool NOT NULL DEFAULT FALSE,
    created_at datetime,
    updated_at datetime,
    full_text varchar(255) DEFAULT '',
    album_artist_id varchar(255) DEFAULT '',
    date varchar(255) NOT NULL DEFAULT '',
    original_year INT NOT NULL DEFAULT 0,
    original_date varchar(255) NOT NULL DEFAULT '',
    release_year INT NOT NULL DEFAULT 0,
    release_date varchar(255) NOT NULL DEFAULT '',
    order_album_name varchar NOT NULL DEFAULT '',
    order_album_artist_name varchar NOT NULL DEFAULT '',
    order_artist_name varchar NOT NULL DEFAULT '',
    sort_album_name varchar NOT NULL DEFAULT '',
    sort_artist_name varchar NOT NULL DEFAULT '',
    sort_album_artist_name varchar NOT NULL DEFAULT '',
    sort_title varchar NOT NULL DEFAULT '',
    disc_subtitle varchar NOT NULL DEFAULT '',
    catalog_num varchar NOT NULL DEFAULT '',
    comment varchar NOT NULL DEFAULT '',
    order_title varchar NOT NULL DEFAULT '',
    mbz_recording_id varchar NOT NULL DEFAULT '',
    mbz_album_id varchar NOT NULL DEFAULT '',
    mbz_artist_id varchar NOT NULL DEFAULT '',
    mbz_album_artist_id varchar NOT NULL DEFAULT '',
    mbz_album_type varchar NOT NULL DEFAULT '',
    mbz_album_comment varchar NOT NULL DEFAULT '',
    mbz_release_track_id varchar NOT NULL DEFAULT '',
    channels INTEGER NOT NULL DEFAULT 0,
    lyrics jsonb NOT NULL DEFAULT '[]',
    sample_rate INTEGER NOT NULL DEFAULT 0,
    library_id INTEGER NOT NULL DEFAULT 1 REFERENCES library(id) ON DELETE CASCADE,
    folder_id varchar NOT NULL DEFAULT '',
    pid varchar NOT NULL DEFAULT '',
    missing boolean NOT NULL DEFAULT false,
    mbz_release_group_id varchar NOT NULL DEFAULT '',
    tags jsonb NOT NULL DEFAULT '{}',
    participants jsonb NOT NULL DEFAULT '{}',
    explicit_status varchar NOT NULL DEFAULT '',
    birth_time datetime NOT NULL DEFAULT current_timestamp,
    rg_album_gain REAL,
    rg_album_peak REAL,
    rg_track_gain REAL,
    rg_track_peak REAL,
    average_rating REAL NOT NULL DEFAULT 0,
    search_participants TEXT NOT NULL DEFAULT '',
    search_normalized TEXT NOT NULL DEFAULT '',
    codec VARCHAR(255) NOT NULL DEFAULT '',
    probe_data TEXT NOT NULL DEFAULT '',
    bpm INTEGER,
    bit_depth INTEGER
);
CREATE INDEX media_file_path ON media_file (path);
CREATE INDEX media_file_mbz_track_id ON media_file (mbz_recording_id);
CREATE INDEX media_file_mbz_release_track_id ON media_file (mbz_release_track_id);

-- No primary key since v0.53.0 (20240629152843_remove_annotation_id.go dropped ann_id);
-- user FK since v0.57.0 (20250701010102); rated_at since v0.59.0 (20251109010105).
-- item_type = the annotated table's name: 'media_file' | 'album' | 'artist'  ('playlist' only after v0.63.2).
CREATE TABLE annotation
(
	user_id     varchar(255)    not null
        REFERENCES user(id)
            ON DELETE CASCADE
            ON UPDATE CASCADE,
	item_id     varchar(255)    default '' not null,
	item_type   varchar(255)    default '' not null,
	play_count  integer         default 0,
	play_date   datetime,                              -- last played
	rating      integer         default 0,             -- 0..5, 0 = unrated
	starred     bool            default FALSE not null,
	starred_at  datetime,
	rated_at    datetime,
	unique (user_id, item_id, item_type)
);
CREATE INDEX annotation_play_count ON annotation (play_count);
CREATE INDEX annotation_play_date ON annotation (play_date);
CREATE INDEX annotation_rating ON annotation (rating);
CREATE INDEX annotation_starred ON annotation (starred);
CREATE INDEX annotation_starred_at ON annotation (starred_at);

CREATE TABLE playlist
(
    id           varchar(255)                              not null
        primary key,
    name         varchar(255) collate NOCASE default ''    not null,
    comment      varchar(255)                default ''    not null,
    duration     real                        default 0     not null,
    song_count   integer                     default 0     not null,
    public       bool                        default FALSE not null,
    created_at   datetime,
    updated_at   datetime,
    path         string                      default ''    not null,   -- imported .m3u path, '' if none
    sync         bool                        default false not null,
    size         integer                     default 0     not null,
    rules        varchar,                                             -- smart playlist JSON, NULL otherwise
    evaluated_at datetime,
    owner_id     varchar(255)                              not null
        constraint playlist_user_user_id_fk
            references user
            on update cascade on delete cascade,
    uploaded_image VARCHAR(255) DEFAULT '',                           -- v0.61
    external_image_url VARCHAR(255) DEFAULT ''                        -- v0.61
    -- unreleased (after v0.63.2): average_rating REAL NOT NULL DEFAULT 0, imported_hash varchar default '' not null
);
CREATE INDEX playlist_name ON playlist (name);

-- id is the 1-based POSITION of the track within the playlist (not a global row id).
CREATE TABLE playlist_tracks
(
	id integer default 0 not null,
	playlist_id varchar(255) not null
		constraint playlist_tracks_playlist_id_fk
			references playlist
				on update cascade on delete cascade,
	media_file_id varchar(255) not null
);
CREATE UNIQUE INDEX playlist_tracks_pos ON playlist_tracks (playlist_id, id);

-- One row per user. items = comma-separated media_file ids. current = 0-based INDEX into items
-- since v0.57.0 (20250611010101_playqueue_current_to_index.go); before that current was the
-- media_file id (varchar). position = ms offset in current track, INTEGER since v0.58.5
-- (20250823142158_make_playqueue_position_int.sql), REAL before. No primary key constraint.
CREATE TABLE playqueue(
    id varchar(255) not null,
    user_id varchar(255) not null
        references user(id)
        on update cascade on delete cascade,
    current integer not null default 0,
    changed_by varchar(255),           -- client name
    items varchar(255),
    created_at datetime,
    updated_at datetime,
    position integer
);

-- 20200801101355_create_bookmark_table.go; unchanged since. item_type is always 'media_file';
-- position = ms offset.
CREATE TABLE bookmark
(
    user_id    varchar(255) not null
        references user
            on update cascade on delete cascade,
    item_id    varchar(255) not null,
    item_type  varchar(255) not null,
    comment    varchar(255),
    position   integer,
    changed_by varchar(255),
    created_at datetime,
    updated_at datetime,
    constraint bookmark_pk
        unique (user_id, item_id, item_type)
);

-- Bonus: per-play history, v0.59.0+ (20251206013022_create_scrobbles_table.sql).
-- submission_time = Unix seconds. Unreleased (after v0.63.2): gains "id INTEGER PRIMARY KEY".
CREATE TABLE scrobbles(
    media_file_id VARCHAR(255) NOT NULL
        REFERENCES media_file(id)
            ON DELETE CASCADE
            ON UPDATE CASCADE,
    user_id VARCHAR(255) NOT NULL
        REFERENCES user(id)
            ON DELETE CASCADE
            ON UPDATE CASCADE,
    submission_time INTEGER NOT NULL
);
CREATE INDEX scrobbles_date ON scrobbles (submission_time);
