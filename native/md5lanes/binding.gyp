{
  "targets": [
    {
      "target_name": "md5lanes",
      "sources": ["md5lanes.c"],
      "cflags": ["-O3", "-std=gnu11"],
      "xcode_settings": { "OTHER_CFLAGS": ["-O3", "-std=gnu11"] }
    }
  ]
}
