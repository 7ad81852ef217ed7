"""LibCST codemod entry points (see `.libcst.codemod.yaml`): run with
`python -m libcst.tool codemod <module>.<Command> PATH`."""
