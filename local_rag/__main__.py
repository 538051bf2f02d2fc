from local_rag.cli import main

main()
