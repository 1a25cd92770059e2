#!/bin/bash
template="$(cat "$1")"
eval "$template"
